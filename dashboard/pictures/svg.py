"""SVG primitives: stacked bars, columns — pure functions from numbers and labels to markup.

No charting library and nothing a CSP could object to: no script, no event
handler, no ``style`` attribute — colours are ``fill=`` presentation
attributes, text sizes come from classes in static/app.css.  Labels are
memory-derived (types, sources, titles) and therefore hostile: every piece of
text is escaped here with ``markupsafe.escape`` and control characters are
replaced, and only the finished string is wrapped in ``Markup``.  Each picture
is ``role="img"`` with a ``<title>`` and a ``<desc>`` that states the numbers,
and the templates show the same numbers in a table next to it.
"""

from __future__ import annotations

import re
import unicodedata

from flask_babel import gettext as _
from markupsafe import Markup, escape

from ..words import count

# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
NEGATIVE = "#b31d28"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
LABEL_W, VALUE_W, ROW_H, BAR_H = 170, 50, 24, 16


def clean(text, limit: int = 0) -> str:
    """Text safe to put in SVG: controls and bidi overrides replaced, shortened, escaped."""
    text = _CONTROL.sub("\ufffd", " ".join(str(text).split()))
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return str(escape(text))


def number(value: float) -> str:
    """A compact number for labels: integers as a count is said (``words.count``), others
    with up to two decimals."""
    if float(value).is_integer():
        return count(value)
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.2g}" if text in ("0", "-0") else text  # tiny, but not nothing


def ink(fill: str) -> str:
    """Black or white, whichever contrasts more with ``fill`` (WCAG relative luminance)."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(int(fill[i : i + 2], 16) / 255) for i in (1, 3, 5))
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def text_w(text: str) -> int:
    """About how wide ``text`` is drawn, in px: ~7 a Latin letter, ~13 a Chinese character
    (a width counted in letters cut "作用域" to "用域" and ran "来自建议" past its bar)."""
    return sum(13 if unicodedata.east_asian_width(c) in "WF" else 7 for c in text)


def _ident(chart_id: str) -> str:
    return re.sub(r"[^a-z0-9-]", "-", chart_id.lower())


def amount(value: float, unit) -> str:
    """``value`` with its unit: ``unit`` is a word, or a function of the value (for a plural)."""
    if callable(unit):
        return unit(value)
    return number(value) + (" " + unit if unit else "")


def _svg(chart_id: str, kind: str, width: int, height: int, title: str, desc: str, body: list[str]) -> Markup:
    i = _ident(chart_id)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-{kind}" '
        f'data-chart="{i}" role="img" aria-labelledby="{i}-title {i}-desc" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'preserveAspectRatio="xMinYMin meet">'
        f'<title id="{i}-title">{clean(title)}</title><desc id="{i}-desc">{clean(desc)}</desc>'
    )
    return Markup(head + "".join(body) + "</svg>")  # every piece above was escaped


def _colours(names) -> dict:
    order = list(dict.fromkeys(names))
    return {name: PALETTE[n % len(PALETTE)] for n, name in enumerate(order)}


def _legend(colours: dict, y: int, width: int) -> tuple[list[str], int]:
    out, x = [], 0
    for name, colour in colours.items():
        label = clean(name, 24)
        step = 22 + text_w(name[:24])
        if x and x + step > width:
            x, y = 0, y + 18
        out.append(
            f'<rect class="legend-key" x="{x}" y="{y}" width="12" height="12" '
            f'fill="{colour}"/><text class="legend" x="{x + 16}" y="{y + 11}">{label}</text>'
        )
        x += step
    return out, y + 18


def stacked_bars(
    bars,
    *,
    title: str,
    chart_id: str,
    unit="",
    width: int = 480,
    order=None,
    colours: dict | None = None,
    inline: bool = False,
) -> Markup:
    """Horizontal stacked bars: ``bars`` is ``[(label, [(segment, value), ...]), ...]``.

    Positive values stack rightwards from a zero line, negative ones leftwards
    (a penalty term), all on one scale.  Segments with the same name share a
    colour across bars; ``order`` fixes the legend order.  With ``inline`` each
    segment is coloured by its place in its bar and named inside it when it fits
    (for bars whose segments come from different vocabularies); no legend then.
    """
    bars = [(label, [(str(n), float(v)) for n, v in segments if v]) for label, segments in bars]
    present = dict.fromkeys(n for _, segs in bars for n, _ in segs)
    names = [n for n in dict.fromkeys([*(order or ()), *present]) if n in present]
    chosen = colours or _colours(names)
    colours = {n: chosen.get(n, PALETTE[-1]) for n in names}
    high = max([sum(v for _, v in segs if v > 0) for _, segs in bars] + [0])
    low = max([-sum(v for _, v in segs if v < 0) for _, segs in bars] + [0])
    # Room for the longest (shortened) label at ~7 px a character, no more.
    label_w = min(LABEL_W, 12 + max([text_w(str(label)[:26]) for label, _ in bars] + [7]))
    plot = width - label_w - VALUE_W
    scale = plot / (high + low) if high + low else 0
    zero = label_w + low * scale
    body, descs = [], []
    for row, (label, segs) in enumerate(bars):
        y = row * ROW_H
        total = sum(v for _, v in segs)
        body.append(
            f'<text class="bar-label" x="{label_w - 6}" y="{y + 13}" '
            f'text-anchor="end">{clean(label, 26)}</text>'
        )
        right, left = zero, zero
        if inline:
            colours = {name: PALETTE[n % len(PALETTE)] for n, (name, _) in enumerate(segs)}
        for name, value in segs:
            w = abs(value) * scale
            x = right if value > 0 else left - w
            if value > 0:
                right += w
            else:
                left -= w
            body.append(
                f'<rect class="seg" x="{x:.1f}" y="{y + 2}" width="{max(w, 0.5):.1f}" '
                f'height="{BAR_H}" fill="{NEGATIVE if value < 0 else colours[name]}">'
                f"<title>{clean(_('%(label)s: %(name)s %(amount)s', label=label, name=name, amount=amount(value, unit)))}"
                f"</title></rect>"
            )
            if inline and w >= text_w(name) + 8:  # the name fits inside its segment
                body.append(
                    f'<text class="seg-label" x="{x + 4:.1f}" y="{y + 14}" '
                    f'fill="{ink(colours[name])}">{clean(name, 40)}</text>'
                )
        body.append(f'<text class="bar-value" x="{right + 4:.1f}" y="{y + 13}">{clean(number(total))}</text>')
        parts = ", ".join("%s %s" % (n, number(v)) for n, v in segs) or _("nothing")
        descs.append(
            _("%(label)s: %(parts)s (total %(amount)s)", label=label, parts=parts, amount=amount(total, unit))
        )
    if low:
        body.append(
            f'<line class="zero" x1="{zero:.1f}" x2="{zero:.1f}" y1="0" '
            f'y2="{len(bars) * ROW_H}" stroke="#1b1f24"/>'
        )
    legend, height = ([], len(bars) * ROW_H) if inline else _legend(colours, len(bars) * ROW_H + 6, width)
    return _svg(chart_id, "bars", width, height, title, "; ".join(descs) + ".", body + legend)


def columns(
    periods, series: dict, *, title: str, chart_id: str, width: int = 480, height: int = 180
) -> Markup:
    """Grouped columns per period: ``series`` maps a name to one value per period."""
    names = list(series)
    colours = _colours(names)
    top = max([v for values in series.values() for v in values] + [1])
    plot_h, base = height - 50, height - 34
    slot = (width - 40) / max(len(periods), 1)
    bar_w = max(min(slot / (len(names) + 1), 28), 2)
    body = [
        f'<text class="axis" x="0" y="12">{clean(number(top))}</text>',
        f'<line class="axis" x1="36" x2="{width}" y1="{base}" y2="{base}" stroke="#57606a"/>',
    ]
    every = max(1, round(len(periods) / 12))  # at most ~12 period labels fit
    descs = []
    for p, period in enumerate(periods):
        x0 = 40 + p * slot
        for s, name in enumerate(names):
            value = series[name][p]
            h = value / top * plot_h
            body.append(
                f'<rect class="col" x="{x0 + s * bar_w:.1f}" y="{base - h:.1f}" '
                f'width="{bar_w - 1:.1f}" height="{h:.1f}" fill="{colours[name]}">'
                f"<title>{clean(period)}: {clean(name)} {value}</title></rect>"
            )
        if p % every == 0:
            body.append(f'<text class="axis" x="{x0:.1f}" y="{base + 14}">{clean(period, 10)}</text>')
        descs.append(
            _(
                "%(period)s: %(values)s",
                period=period,
                values=", ".join("%s %s" % (n, series[n][p]) for n in names),
            )
        )
    legend, _height = _legend(colours, height - 16, width)
    desc = "; ".join(descs) + "." if descs else _("No memories yet.")
    return _svg(chart_id, "columns", width, height + 2, title, desc, body + legend)
