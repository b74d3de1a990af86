"""A page's dates ("3 days ago", the exact stamp on hover) say what Babel says, in every
locale, while the words are worked out once per request for a list of hundreds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from babel.dates import format_datetime, format_timedelta
from flask_babel import force_locale, get_locale
from markupsafe import Markup

from dashboard import create_app, words

NOW = datetime(2026, 3, 4, 12, 0, 0)
# Each unit's edges (where Babel rounds up into the next count or unit) and both directions.
SECONDS = [0, 0.4, 0.5, 0.6, 1, 1.5, 59.4, 59.5, 60, 89, 90, 3599, 3600, 5400, 86399, 86400]
SECONDS += [d * 86400 for d in (1.5, 6.4, 6.5, 7, 10.5, 29.6, 30, 45, 364, 365, 547.5, 800, 4000)]


@pytest.mark.parametrize("lang", ["en", "zh_Hans_CN", "de"])
def test_every_date_reads_as_babel_says_it(tmp_path, lang):
    app = create_app({"PROJECT_DIR": [tmp_path], "USER_DB": None, "AUTH_TOKEN": False})
    with app.test_request_context("/"), force_locale(lang):
        for seconds in SECONDS:
            for sign in (1, -1):
                naive = NOW + timedelta(seconds=sign * seconds)
                for moment in (naive, naive.replace(tzinfo=timezone(timedelta(hours=8)))):
                    now = NOW.replace(tzinfo=moment.tzinfo)
                    relative = format_timedelta(
                        moment - now, threshold=1, add_direction=True, locale=get_locale()
                    )
                    stamp = format_datetime(moment, "medium", locale=get_locale())
                    want = Markup('<time datetime="%s" title="%s">%s</time> <span class="exact">(%s)</span>')
                    said = words.when(moment.isoformat(), now=now, exact=True)
                    assert said == want % (moment.isoformat(), stamp, relative, stamp)
