"""The residue byte scan on files built byte by byte: whole texts, texts cut into
page-sized pieces, texts held by live rows, short texts, and texts across the
places where the scanner cuts a large file."""

from __future__ import annotations

import random

import pytest

from dashboard import diskscan

LETTERS = "etaoinshrdlcumwfgypbvkjxqz"


def words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choices(LETTERS, weights=range(26, 0, -1), k=rng.randint(2, 9)))
                    for _ in range(n))


def filler(rng: random.Random, size: int) -> bytes:
    """Page-like bytes: ordinary text, runs of zeros, a little binary."""
    parts = [words(rng, 40).encode() for _ in range(300)] + [bytes(300)] * 100 + \
        [rng.randbytes(40) for _ in range(100)]
    return b"".join(rng.choices(parts, k=size // 150))[:size]


def scan_bytes(tmp_path, data: bytes, texts, ignore: bytes = b"") -> dict:
    path = tmp_path / "memory.db"
    path.write_bytes(data)
    hits, scanned = diskscan.scan([path], texts, ignore=ignore)
    assert scanned == [(path, len(data))]
    return {t: hits[diskscan.sha256_text(t)].files.get(str(path)) for t in texts} | {
        "still_stored": {t for t in texts if hits[diskscan.sha256_text(t)].still_stored}}


@pytest.mark.parametrize("seed", range(3))
def test_whole_cut_and_absent_texts_across_a_large_file(tmp_path, seed):
    rng = random.Random(seed)
    texts = [words(rng, rng.randint(30, 600)) for _ in range(60)]
    whole, cut, absent = texts[:20], texts[20:40], texts[40:]
    data = bytearray(filler(rng, 3 * diskscan.PIECE))
    for text in whole + cut:
        raw = text.encode()
        # A cut text lies in pieces of at least 200 bytes at unrelated places,
        # the way a long row lies on its overflow pages.
        pieces = [raw] if text in whole else [raw[k:k + 400] for k in range(0, len(raw), 400)]
        for piece in pieces:
            at = rng.randrange(len(data) - len(piece))
            if text is whole[0]:
                at = diskscan.PIECE - len(piece) // 2    # across the first megabyte's end
            data[at:at + len(piece)] = piece
    found = scan_bytes(tmp_path, bytes(data), texts)
    overwritten = [t for t in whole if t.encode() not in data]   # a later text landed on it
    assert all(found[t] == {"whole": True, "fragments": found[t]["fragments"]}
               for t in whole if t not in overwritten)
    assert all(found[t] and found[t]["fragments"] >= 1 and found[t]["whole"] is False
               for t in cut if len(t) > 420)
    assert [t for t in absent if found[t]] == []


def test_texts_held_by_live_rows_are_not_residue(tmp_path):
    rng = random.Random(7)
    kept, shared, gone = words(rng, 80), words(rng, 80), words(rng, 80)
    partly = shared + " " + gone
    data = filler(rng, 200_000) + kept.encode() + filler(rng, 1000) + partly.encode()
    live = (kept + "\x00" + shared).encode()
    found = scan_bytes(tmp_path, data, [kept, partly], ignore=live)
    assert found[kept] is None and found["still_stored"] == {kept}
    assert found[partly]["whole"] is True and found[partly]["fragments"] >= 1


def test_only_the_middle_of_a_long_text_left_is_found(tmp_path):
    rng = random.Random(3)
    # CJK: three bytes a character, none of them the anchor chosen for the English texts.
    long = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(4000))
    english = [words(rng, 200) for _ in range(20)]
    middle = long.encode()[5000:7000]
    data = filler(rng, 300_000) + middle + filler(rng, 300_000)
    found = scan_bytes(tmp_path, data, [long, *english])
    assert found[long]["fragments"] >= 1 and found[long]["whole"] is False
    assert not any(found[t] for t in english)


@pytest.mark.parametrize("n_short", [3, 40])   # a few are searched with find, many in a pass
def test_short_texts_whole_and_absent(tmp_path, n_short):
    rng = random.Random(n_short)
    short = [f"pin {rng.randint(1000, 9999)} for the {words(rng, 2)}" for _ in range(n_short)]
    present, absent = short[: n_short // 2 + 1], short[n_short // 2 + 1:]
    data = filler(rng, 500_000) + b"\x00".join(t.encode() for t in present) + filler(rng, 1000)
    found = scan_bytes(tmp_path, data, short + [words(rng, 300)])
    assert all(found[t] and found[t]["whole"] for t in present)
    assert [t for t in absent if found[t]] == []


def test_whole_is_seen_after_an_earlier_fragment_of_the_same_text(tmp_path):
    rng = random.Random(11)
    text = words(rng, 300)
    raw = text.encode()
    data = filler(rng, 100_000) + raw[: len(raw) // 2] + filler(rng, 100_000) + raw + filler(rng, 10)
    found = scan_bytes(tmp_path, data, [text])
    assert found[text]["whole"] is True
    cut_only = filler(rng, 100_000) + raw[: len(raw) // 2] + bytes(50) + raw[len(raw) // 2:]
    assert scan_bytes(tmp_path, cut_only, [text])[text]["whole"] is False


def test_texts_after_megabytes_without_an_anchor_are_found(tmp_path):
    rng = random.Random(13)
    texts = [words(rng, 300) for _ in range(3)]
    data = b"".join([texts[0].encode(), bytes(6 * diskscan.PIECE + 7), texts[1].encode(),
                     b"\xff" * (2 * diskscan.PIECE), texts[2].encode()[:900]])
    found = scan_bytes(tmp_path, data, texts)
    assert found[texts[0]]["whole"] and found[texts[1]]["whole"]
    assert found[texts[2]]["fragments"] >= 1 and not found[texts[2]]["whole"]
