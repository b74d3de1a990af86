"""The second half of test_chinese.py's walk, in its own file so that the other worker
runs it (each file starts its own demo)."""

from __future__ import annotations

from .test_chinese import walk


def test_second_half_of_the_demo_pages_reads_in_chinese(browser, demo):
    walk(browser, demo, 1)
