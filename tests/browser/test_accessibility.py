"""Every page of the demo at 1280×900 and 390×844: axe-core finds no serious or critical
WCAG 2.1 A/AA violation, nothing scrolls sideways, and no table cell is squeezed below 60 px.

The demo is what a new user sees first (``--demo``); the hostile corpus gets the same
axe check in test_hostile_content.py.  axe-core 4.14.1 is vendored in tests/browser/vendor
(its licence and checksum beside it) and injected by WebDriver, never served by the app.
"""

from __future__ import annotations

import json

from .conftest import (
    PHONE,
    axe_in_every_page,
    axe_problems,
    both_widths,
    first_row,
    half,
    html_pages,
    layout_problems,
)


def demo_pages(srv, which: int) -> list[str]:
    """Half ``which`` of the demo's pages (see ``half``): this file walks the first, the
    ``_2`` file the second, and test_chinese*.py do the same."""
    from dashboard import create_app

    app = create_app(
        {"PROJECT_DIR": srv.project_db.parent.parent, "USER_DB": srv.user_db, "AUTH_TOKEN": False}
    )
    project = first_row(srv.project_db, "SELECT id FROM memories WHERE deleted_at IS NULL")[0]
    user = first_row(srv.user_db, "SELECT id FROM memories WHERE deleted_at IS NULL")[0]
    item = first_row(srv.project_db, "SELECT id FROM memory_review_queue WHERE status = 'pending'")[0]
    pages = html_pages(app, [("project", project), ("user", user)], item)
    assert len(pages) >= 15, pages
    return half(pages, which, [project, user, item])


def walk(browser, demo, which: int) -> None:
    found = {}
    with axe_in_every_page(browser):
        for path in demo_pages(demo, which):
            for size in both_widths(browser, demo.url(path)):
                problems = axe_problems(browser) + (layout_problems(browser) if size == PHONE else [])
                if problems:
                    found[f"{path} @{size[0]}"] = problems
    assert not found, "accessibility / layout problems:\n" + json.dumps(found, indent=1, ensure_ascii=False)


def test_first_half_of_the_demo_pages_passes_axe_and_fits_a_phone(browser, demo):
    walk(browser, demo, 0)
