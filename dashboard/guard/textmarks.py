"""Memory text on HTML pages: isolated, with every hidden character shown as a named mark.

The one place that turns stored text into markup.  Every piece of the text
goes through ``markupsafe.escape``; the only markup added is this module's
own literal tags, and the code point and name inside them (from
``dashboard.guard.invisible``) are escaped too.  Nothing here uses ``|safe``.

Three ways out, for the three places text lands in a template:

* ``{{ text|shown }}`` for text a person reads (content, titles, tags...):
  ``<bdi>`` around it, so its direction cannot spill into the page, and each
  hidden character replaced by ``<span class="ctl" title="U+202E RIGHT-TO-LEFT
  OVERRIDE">⟨U+202E⟩</span>``.
* Every other ``{{ … }}`` (attributes, ``<title>``, ``<option>``, messages
  that quote a title): the Jinja ``finalize`` hook replaces hidden characters
  with the plain ``⟨U+202E⟩`` mark, which is safe in any context.  A template
  that forgets ``|shown`` still shows no raw control character.
* ``{{ value|as_stored }}`` for form fields that must send the stored value
  back unchanged (the edit box, a filter echo): escaped, not marked; NUL only
  becomes U+FFFD, as every browser's parser would make it anyway, and so does a
  lone surrogate (no page can carry one, no browser can send one back).
"""

from __future__ import annotations

import re

from flask import Flask
from markupsafe import Markup, escape

from .invisible import code_point, describe, hidden_spans, may_hide

_MARK = Markup('<span class="ctl" title="{}">⟨{}⟩</span>')
_BDI = Markup("<bdi>%s</bdi>")  # % escapes a str argument, keeps a Markup one
_SURROGATES = re.compile("[\ud800-\udfff]")


def _pieces(text: str, mark) -> list:
    out, pos = [], 0
    for start, end in hidden_spans(text):
        out.append(text[pos:start])
        out.extend(mark(ch) for ch in text[start:end])
        pos = end
    out.append(text[pos:])
    return out


def _marked(text: str) -> Markup:
    """``text`` escaped, each hidden character replaced by its named mark."""
    return Markup("").join(
        piece if isinstance(piece, Markup) else escape(piece)
        for piece in _pieces(text, lambda ch: _MARK.format(describe(ch), code_point(ch)))
    )


def shown(value) -> Markup:
    """``value`` as isolated HTML text with its hidden characters marked (see the module)."""
    text = str(value)
    if not may_hide(text):
        # The same as _BDI % text, in a third of the time (a list page has thousands).
        return Markup(f"<bdi>{escape(text)}</bdi>")
    return _BDI % _marked(text)


def key_shown(value) -> Markup:
    """A memory's key (or a title that is one: agentao titles a memory by its raw key) as
    ``shown``, with a line-break chance (``<wbr>``) after each ``_``: a long key wraps between
    its words on a phone, never inside one, and copies exactly."""
    return _BDI % Markup("_<wbr>").join(_marked(part) for part in str(value).split("_"))


def marked_plain(text: str) -> str:
    """``text`` with each hidden character replaced by ``⟨U+202E⟩`` (plain text, to be escaped)."""
    return "".join(_pieces(text, lambda ch: f"⟨{code_point(ch)}⟩"))


def as_stored(value) -> Markup:
    """``value`` escaped for a form field that must send it back as stored (see the module)."""
    text = str(value).replace("\x00", "\ufffd")
    if not text.isascii():
        text = _SURROGATES.sub("\ufffd", text)
    return escape(text)


def finalize(value):
    """Jinja's hook on every ``{{ … }}``: plain strings get their hidden characters marked;
    Markup (``shown``, ``as_stored``, the pictures) is left as it is."""
    if type(value) is str and may_hide(value):
        return marked_plain(value)
    return value


def init_app(app: Flask) -> None:
    app.jinja_env.finalize = finalize
    app.jinja_env.filters["shown"] = shown
    app.jinja_env.filters["key_shown"] = key_shown
    app.jinja_env.filters["as_stored"] = as_stored
    # For a value put into a translated sentence (``_("Select %(title)s", title=x|marked)``):
    # gettext's result is Markup, which ``finalize`` no longer marks.
    app.jinja_env.filters["marked"] = lambda value: marked_plain(str(value))
