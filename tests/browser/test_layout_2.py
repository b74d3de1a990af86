"""The second half of test_layout.py's walk, in its own file so that the other worker runs it."""

from __future__ import annotations

from .test_layout import server, two_projects, walk  # noqa: F401  (the fixtures, as in test_layout.py)


def test_second_half_of_the_pages_fits_360_px_and_labels_every_control(browser, server, two_projects):
    walk(browser, server, two_projects, 1)
