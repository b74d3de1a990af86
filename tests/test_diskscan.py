"""The residue byte scan on files built byte by byte: whole texts, texts cut into
page-sized pieces, texts held by live rows, short texts, and texts across the
places where the scanner cuts a large file."""

from __future__ import annotations

import random

import pytest

from dashboard.actions import diskscan

LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
pytestmark = pytest.mark.usefixtures("scan_loop")  # every case, compiled and with numpy


def words(rng: random.Random, n: int) -> str:
    return " ".join(
        "".join(rng.choices(LETTERS, weights=range(26, 0, -1), k=rng.randint(2, 9))) for _ in range(n)
    )


def filler(rng: random.Random, size: int) -> bytes:
    """Page-like bytes: ordinary text, runs of zeros, a little binary."""
    parts = (
        [words(rng, 40).encode() for _ in range(300)]
        + [bytes(300)] * 100
        + [rng.randbytes(40) for _ in range(100)]
    )
    return b"".join(rng.choices(parts, k=size // 150))[:size]


def scan_bytes(tmp_path, data: bytes, texts, ignore: bytes = b"") -> dict:
    path = tmp_path / "memory.db"
    path.write_bytes(data)
    hits, scanned = diskscan.scan([path], texts, ignore=ignore)
    assert scanned == [(path, len(data))]
    return {t: hits[diskscan.sha256_text(t)].files.get(str(path)) for t in texts} | {
        "still_stored": {t for t in texts if hits[diskscan.sha256_text(t)].still_stored}
    }


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
        pieces = [raw] if text in whole else [raw[k : k + 400] for k in range(0, len(raw), 400)]
        for piece in pieces:
            at = rng.randrange(len(data) - len(piece))
            if text is whole[0]:
                at = diskscan.PIECE - len(piece) // 2  # across the first megabyte's end
            data[at : at + len(piece)] = piece
    found = scan_bytes(tmp_path, bytes(data), texts)
    overwritten = [t for t in whole if t.encode() not in data]  # a later text landed on it
    assert all(
        found[t] == {"whole": True, "fragments": found[t]["fragments"]} for t in whole if t not in overwritten
    )
    assert all(
        found[t] and found[t]["fragments"] >= 1 and found[t]["whole"] is False for t in cut if len(t) > 420
    )
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


@pytest.mark.parametrize("n_short", [3, 40])  # a few are searched with find, many in a pass
def test_short_texts_whole_and_absent(tmp_path, n_short):
    rng = random.Random(n_short)
    short = [f"pin {rng.randint(1000, 9999)} for the {words(rng, 2)}" for _ in range(n_short)]
    present, absent = short[: n_short // 2 + 1], short[n_short // 2 + 1 :]
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
    cut_only = filler(rng, 100_000) + raw[: len(raw) // 2] + bytes(50) + raw[len(raw) // 2 :]
    assert scan_bytes(tmp_path, cut_only, [text])[text]["whole"] is False


def test_texts_after_megabytes_without_an_anchor_are_found(tmp_path):
    rng = random.Random(13)
    texts = [words(rng, 300) for _ in range(3)]
    data = b"".join(
        [
            texts[0].encode(),
            bytes(6 * diskscan.PIECE + 7),
            texts[1].encode(),
            b"\xff" * (2 * diskscan.PIECE),
            texts[2].encode()[:900],
        ]
    )
    found = scan_bytes(tmp_path, data, texts)
    assert found[texts[0]]["whole"] and found[texts[1]]["whole"]
    assert found[texts[2]]["fragments"] >= 1 and not found[texts[2]]["whole"]


def test_a_piece_across_a_read_boundary_counts_as_anywhere_else(tmp_path):
    # The file is read a piece at a time; a run cut by a read is joined again.
    rng = random.Random(17)
    text = words(rng, 400)
    piece = text.encode()[700:1700]
    base = filler(rng, 3 * diskscan.PIECE)
    counts = []
    for at in (100_000, diskscan.PIECE - 500, 2 * diskscan.PIECE - 3):
        data = base[:at] + piece + base[at + len(piece) :]
        counts.append(scan_bytes(tmp_path, data, [text])[text])
    assert counts[0]["fragments"] >= 1 and counts[0]["whole"] is False
    assert counts[1] == counts[2] == counts[0]


def test_short_text_across_a_read_boundary_is_found_whole(tmp_path):
    rng = random.Random(19)
    short = [f"pin {rng.randint(1000, 9999)} for the {words(rng, 2)}" for _ in range(3)]
    base = bytearray(filler(rng, 2 * diskscan.PIECE))
    for k, text in enumerate(short[:2]):
        raw = text.encode()
        at = (k + 1) * diskscan.PIECE - len(raw) // 2
        base[at : at + len(raw)] = raw
    found = scan_bytes(tmp_path, bytes(base), short)
    assert found[short[0]]["whole"] and found[short[1]]["whole"] and found[short[2]] is None


def test_texts_across_the_cut_between_parts_searched_at_once_are_found_whole(tmp_path, monkeypatch):
    # A piece is searched in parts at once (however loaded the machine is here): a text lying
    # over a cut between them (in the first piece, and in a later one read after the previous
    # piece's tail), short, of one block exactly, or long, is found whole as anywhere else.
    monkeypatch.setattr(diskscan, "parts_at_once", lambda: 2)
    rng = random.Random(29)
    texts = [f"pin {rng.randint(1000, 9999)}", words(rng, 8)[:31], words(rng, 120)]
    part = -(-diskscan.PIECE // 2)
    base = filler(rng, 2 * diskscan.PIECE)
    for cut in (part, diskscan.PIECE + part):
        for text in texts:
            raw = text.encode()
            for skew in {1, 15, 16, len(raw) - 1}:
                data = base[: cut - skew] + raw + base[cut - skew + len(raw) :]
                assert (scan_bytes(tmp_path, data, [text])[text] or {}).get("whole"), (cut, text, skew)


@pytest.mark.parametrize(
    ("cores", "load", "parts"), [(2, 0.2, 2), (8, 3.0, 2), (2, 1.0, 1), (2, 11.0, 1), (1, 0.0, 1)]
)
def test_a_piece_is_searched_in_one_part_a_free_core(monkeypatch, cores, load, parts):
    # On a crowded machine two threads only wait for each other: the scan spreads only on free cores.
    monkeypatch.setattr(diskscan.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(diskscan.os, "getloadavg", lambda: (load, load, load))
    assert diskscan.parts_at_once() == parts


def test_cjk_texts_whole_cut_and_absent(tmp_path):
    # Chinese as written: frequent characters, with the full-width comma and stop.
    rng = random.Random(23)
    common = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府"

    def chinese(n):
        return "，".join("".join(rng.choices(common, k=rng.randint(6, 18))) for _ in range(n)) + "。"

    cjk = [chinese(rng.randint(20, 200)) for _ in range(30)]
    english = [words(rng, rng.randint(30, 300)) for _ in range(10)]
    whole, cut, absent = cjk[:10] + english[:4], cjk[10:20] + english[4:7], cjk[20:] + english[7:]
    data = bytearray(filler(rng, 3_000_000))
    spots = iter(range(20_000, len(data) - 20_000, 20_000))  # each text under 8 KB
    for text in whole + cut:
        raw = text.encode()
        # Overflow pages cut a text anywhere, in the middle of a character too.
        pieces = [raw] if text in whole else [raw[k : k + 700] for k in range(5, len(raw) - 700, 1400)]
        for piece in pieces:
            at = next(spots)
            data[at : at + len(piece)] = piece
    found = scan_bytes(tmp_path, bytes(data), whole + cut + absent)
    assert [t for t in whole if not (found[t] and found[t]["whole"])] == []
    assert [t for t in cut if len(t.encode()) > 1500 and not (found[t] and found[t]["fragments"])] == []
    assert all(found[t] is None or not found[t]["whole"] for t in cut)
    assert [t for t in absent if found[t]] == []


def test_text_only_in_the_wal_or_only_in_a_copy_is_found_there_alone(tmp_path):
    import shutil
    import sqlite3

    rng = random.Random(29)
    in_wal, in_copy, kept = words(rng, 400), words(rng, 400), words(rng, 400)
    db = tmp_path / "memory.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.execute("INSERT INTO t VALUES (?), (?)", (in_copy, kept))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(db, str(db) + ".bak")
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("DELETE FROM t WHERE x = ?", (in_copy,))
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("INSERT INTO t VALUES (?)", (in_wal,))  # stays in the -wal: no checkpoint
    paths = [db, tmp_path / "memory.db-wal", tmp_path / "memory.db.bak"]
    hits, scanned = diskscan.scan(paths, [in_wal, in_copy, kept], ignore=kept.encode())
    conn.close()
    where = {t: sorted(hits[diskscan.sha256_text(t)].files) for t in (in_wal, in_copy, kept)}
    assert (
        where[in_wal] == [str(paths[1])] and hits[diskscan.sha256_text(in_wal)].files[str(paths[1])]["whole"]
    )
    assert where[in_copy] == [str(paths[2])]
    assert where[kept] == [] and hits[diskscan.sha256_text(kept)].still_stored


def test_texts_the_first_anchor_cannot_cut_are_found_by_another(tmp_path):
    rng = random.Random(31)

    def narrow(n):  # a handful of letters: the rarer ones that cut the other texts never occur
        return " ".join("".join(rng.choices("aeiostnrl", k=rng.randint(2, 8))) for _ in range(n))

    plain = [words(rng, 300) for _ in range(20)]
    short, longer = [narrow(rng.randint(40, 70)) for _ in range(24)], [narrow(150) for _ in range(8)]
    whole, cut, absent = plain[:5] + short[:12], longer, plain[5:] + short[12:]
    data = bytearray(filler(rng, 1_000_000))
    spots = iter(range(10_000, len(data) - 10_000, 10_000))
    for text in whole + cut:
        raw = text.encode()
        for piece in [raw] if text in whole else [raw[: len(raw) // 2], raw[len(raw) // 2 :]]:
            at = next(spots)
            data[at : at + len(piece)] = piece
    found = scan_bytes(tmp_path, bytes(data), whole + cut + absent)
    assert [t for t in whole if not (found[t] and found[t]["whole"])] == []
    assert [t for t in cut if not (found[t] and found[t]["fragments"] and not found[t]["whole"])] == []
    assert [t for t in absent if found[t]] == []


def test_text_a_row_saved_during_the_scan_holds_is_saved_again_not_residue(tmp_path):
    rng = random.Random(37)
    # Long (many keys: one pass over the live text), medium, short (found by bytes.find),
    # one saved again only in part, and one nobody saved again.
    long, medium, short = words(rng, 600), words(rng, 60), "the pager rota moved to Tuesdays"
    partly, residue, middle = words(rng, 120), words(rng, 120), words(rng, 900)
    # Of ``middle`` only 1,500 bytes are in the file (an overflow page's worth), and the
    # row saved meanwhile holds just those: every key found is live, the text is not whole.
    piece = middle.encode()[2000:3500]
    data = bytearray(filler(rng, 500_000))
    for at, raw in zip(
        range(20_000, 500_000, 60_000), [t.encode() for t in (long, medium, short, partly, residue)] + [piece]
    ):
        data[at : at + len(raw)] = raw
    path = tmp_path / "memory.db"
    path.write_bytes(bytes(data))
    texts = [long, medium, short, partly, residue, middle]
    later = "\x00".join(
        [long, "note: " + medium + " (again)", short, partly[: len(partly) // 3], piece.decode()]
    )
    asked = []

    def live_again():
        asked.append(1)
        return later.encode()

    hits, _ = diskscan.scan([path], texts, ignore=b"unrelated", live_again=live_again)
    hit = {t: hits[diskscan.sha256_text(t)] for t in texts}
    for text in (long, medium, short, middle):
        assert hit[text].files == {} and hit[text].saved_again and hit[text].still_stored, text[:20]
    for text in (partly, residue):
        assert hit[text].files[str(path)]["whole"] and not hit[text].saved_again
    assert asked == [1]
    # Nothing found: the live text is not read again at all.
    clean = tmp_path / "clean.db"
    clean.write_bytes(filler(rng, 100_000))
    hits, _ = diskscan.scan([clean], texts, live_again=live_again)
    assert asked == [1] and not any(h.found or h.saved_again for h in hits.values())
