"""The second half of test_accessibility.py's walk, in its own file so that the other
worker runs it (each file starts its own demo)."""

from __future__ import annotations

from .test_accessibility import walk


def test_second_half_of_the_demo_pages_passes_axe_and_fits_a_phone(browser, demo):
    walk(browser, demo, 1)
