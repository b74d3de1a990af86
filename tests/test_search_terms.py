"""The search's word index answers exactly what reading every haystack answers."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from dashboard.store.terms import TermIndex, words

# Few letters so that words repeat (dense postings) and needles hit; the separators
# and a non-ASCII letter so that word edges are tested.
TEXT = st.text(alphabet="abcé_% \n\t.", max_size=12)
NEEDLE = st.text(alphabet="abcé.", min_size=1, max_size=3)


def hits(index: TermIndex, needle: str) -> set[int]:
    mask, sparse = index.rows_with(needle)
    found = {rid for rids in sparse for rid in rids}
    return found | {rid for rid in range(index.top) if mask >> 8 * rid & 1}


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.tuples(st.lists(TEXT, max_size=8), st.sets(st.integers(0, 40))),
                        min_size=1, max_size=6),
       needles=st.lists(NEEDLE, min_size=1, max_size=6))
def test_the_index_follows_rows_added_and_removed_in_batches(batches, needles):
    index, held, next_rid = TermIndex(), {}, 1
    for texts, leaving in batches:
        gone = {rid: held.pop(rid) for rid in sorted(leaving) if rid in held}
        index.remove(gone)
        new = {next_rid + n: text for n, text in enumerate(texts)}
        next_rid += len(texts)
        index.add((rid, text, "file", rid % 2 == 0) for rid, text in new.items())
        held.update(new)
        for needle in needles:
            assert hits(index, needle) == {rid for rid, text in held.items() if needle in text}
        live = index.rows_of(["file"], live_only=True)
        assert {rid for rid in range(index.top) if live >> 8 * rid & 1} == {r for r in held if r % 2 == 0}


def test_a_word_list_past_its_packing_size_is_searched_whole():
    index = TermIndex()
    index.add((rid, f"w{rid}x common_{rid % 7}", "file", True) for rid in range(3000))
    index.add([(3000, "late w2999x arrival", "file", True)])
    index.remove({12: "w12x common_5"})
    assert hits(index, "w299") == {299, 2990, 2991, 2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999, 3000}
    assert hits(index, "common") == set(range(3000)) - {12}
    assert hits(index, "rriv") == {3000}
    assert words("a_b%c d\u3000e") == {"a", "b", "c", "d", "e"}
