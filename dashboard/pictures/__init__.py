"""Server-rendered SVG pictures with no charting library (see svg.py for the safety rules)."""

from .screens import (
    candidate_scores,
    composition,
    fill_periods,
    overview_pictures,
    residue_bars,
    residue_rows,
    score_bars,
)
from .svg import clean, columns, stacked_bars

__all__ = [
    "candidate_scores",
    "composition",
    "fill_periods",
    "overview_pictures",
    "residue_bars",
    "residue_rows",
    "score_bars",
    "clean",
    "columns",
    "stacked_bars",
]
