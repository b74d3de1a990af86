"""The second half of test_hostile_content.py's walk, in its own file so that the other
worker runs it (over its own corpus and server)."""

from __future__ import annotations

from .test_hostile_content import corpus, server, walk  # noqa: F401  (the fixtures, as there)


def test_no_payload_runs_and_no_request_fires_on_the_second_half_of_the_pages(browser, server, corpus):
    walk(browser, server, corpus, 1)
