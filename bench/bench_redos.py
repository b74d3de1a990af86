"""Adversarial needles and memory contents against a plain scan (issue 19, items 1 and 2).

A search needle arrives in a URL that any page can make the browser fetch,
and a memory holds whatever an agent (or a prompt injected into it) wrote:
neither may decide how long the server works.  Goal: no needle or content
costs more than 3x a plain scan.

(a) Search.  A store of N rows of 4,000 characters (raw SQL), in families an
    adversary would pick: prose; "#" then "z a z a ..."; "abab..."; and a few
    rows holding NUL, which always go through agentao's own SQL predicate.
    Every row ends with "lorem ipsum", so a plain scan is the store's own search
    for "ipsum lorem": its words are in every row, so it reads every haystack
    (``needle in haystack``).  Each needle's search (``search.matching`` over
    the file's snapshot, CPU time, best of --runs, alternating with the plain
    scan) is printed as a multiple of it, and the wall time of one request
    (/memories.json).  For scale: the raw
    ``str.find`` of that literal and of a two-letter one over the same haystacks.
(b) Findings.  Every rule a findings scan runs over memory text (the secret
    rules, agentao's guard shapes included; the personal and instruction
    rules; the cheap gates; ``scan_text`` whole), over adversarial contents of
    4,000 characters: the issue's, and label-like heads followed by a long run
    of one character or repeated, per family of rules.  Here the plain scan is
    the same rule over ordinary memories of the same length (the median of
    three kinds); beside it an ``re.search`` of an absent literal over as many
    characters.  The worst content per rule is shown.  A rule whose starts are
    rare in ordinary text (a literal sre jumps to) shows a large ratio on
    content made of its starts, though each start costs it a bounded amount:
    tests/test_findings_redos.py checks that the work grows with the length,
    not its square.
(c) Findings page: the full scan of a store of 300 rows of each of the
    issue's contents (it took 18-72 s before the fix).
(d) Outside these items' files, printed for the record: agentao's guard as
    ``contract.find_secret`` runs it (a save or an approval) and its keyword
    extraction, over the same contents.
(e) The two path patterns shared with agentao (keywords, recall hints), ours and
    agentao's, on long runs of path characters: growth from 1,000 to 4,000.

    python bench/bench_redos.py [--rows 3000] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from texts import (  # noqa: E402
    ALL_HEADS,
    HEADS,
    ISSUE_CONTENTS,
    SIZE,
    adversarial_contents,
    ordinary_contents,
    rule_runners,
)


def outside_runners() -> dict:
    """Regexes over memory text in files outside items 1-2 (agentao's own shapes)."""
    from dashboard import contract

    return {
        "contract.find_secret (save, approve)": (None, contract.find_secret),
        "contract.extract_keywords (save, approve)": (None, lambda t: contract.extract_keywords("k", [], t)),
    }


def cpu(fn, arg, rounds: int) -> float:
    """Best CPU seconds of ``rounds`` calls (the cyclic collector paused: its passes
    cost what the whole process holds, not what the call does)."""
    best = float("inf")
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            start = time.process_time()
            fn(arg)
            best = min(best, time.process_time() - start)
    finally:
        if was:
            gc.enable()
    return best


# --- (a) search ----------------------------------------------------------------
FAMILIES = {
    "prose": lambda rng: " ".join(
        rng.choice(
            (
                "deploy",
                "build",
                "cache",
                "redis",
                "token",
                "review",
                "a",
                "of",
                "the",
                "queue",
                "worker",
                "python",
            )
        )
        for _ in range(900)
    ),
    "z a": lambda rng: "#" + "z a " * 1000 + "q",
    "abab": lambda rng: "ab" * 2000,
}
NEEDLES = [
    "%_%_%_%_%_%_%_%#",
    "%zz%",  # the issue's
    "%",
    "_",
    "%_%",
    "_" * 60,
    "%_" * 60 + "e",  # gaps
    "%z" * 80 + "%",
    "a%" * 90 + "#",
    "z%a%#",  # many pieces
    "a_b",
    "z_a z_a z_q",
    "%z_z_z_z_z_z_z_z_z_z_z_z_z_z_z_z_q%",
    "a_a_a_a_a_a_a_a_a_a_b",
    "a_" * 99 + "b",
    "d_ploy",
    "lorem_ipsum",  # "_" inside a piece
    "a\x00b",
    "\x00",
    "ab\x1fab",  # NUL (SQLite stops there), the separator
    "lorem ipsum",
    "zz",  # plain needles, for comparison
]


def build_search_store(root: Path, rows: int) -> tuple[Path, Path]:
    from dashboard.store.schema import create_fresh_store

    rng = random.Random(3)
    project = root / "project"
    conn = create_fresh_store(project / ".agentao" / "memory.db")
    names = list(FAMILIES)
    records = []
    for i in range(rows):
        body = FAMILIES[names[i % len(names)]](rng)[: SIZE - 12] + " lorem ipsum"
        if i % 100 == 7:
            body = body[:100] + "\x00" + body[101:]  # odd: agentao's SQL decides it
        stamp = f"2026-01-{1 + i % 28:02d}T00:00:{i % 60:02d}"
        records.append(
            (
                f"{i:08x}",
                "project",
                "note",
                f"t{i}",
                f"t{i}",
                body,
                json.dumps([f"tag{i % 7}"]),
                "[]",
                "explicit",
                "explicit_user",
                "normal",
                stamp,
                stamp,
                None,
            )
        )
    conn.executemany("INSERT INTO memories VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", records)
    conn.commit()
    conn.close()
    user = root / "user.db"
    create_fresh_store(user).close()
    return project, user


def bench_search(rows: int, runs: int) -> float:
    from dashboard import create_app
    from dashboard.store.search import matching
    from dashboard.store.snapshot import rows_of

    root = Path(tempfile.mkdtemp(prefix="bench-redos-"))
    project, user = build_search_store(root, rows)
    app = create_app({"PROJECT_DIR": project, "USER_DB": user, "AUTH_TOKEN": False})
    client = app.test_client()
    nul = len(range(7, rows, 100))  # SQLite's LIKE reads these only up to their NUL
    assert client.get("/memories.json?q=lorem").get_json()["total"] == rows - nul
    snap = rows_of(app.extensions["workspace"].refs(0)[0])
    hays = snap.haystacks
    raw = {
        lit: cpu(lambda hs, lit=lit: [h for h in hs if lit in h], hays, runs) for lit in ("ipsum lorem", "zq")
    }
    print(
        f"(a) search: {rows:,} rows of {SIZE:,} characters ({', '.join(FAMILIES)}; {rows // 100} hold a NUL)"
    )
    print(
        f"    raw str.find over the haystacks: 'ipsum lorem' {raw['ipsum lorem'] * 1e3:.1f} ms,"
        f" 'zq' {raw['zq'] * 1e3:.1f} ms"
    )
    print(f"    {'needle':<44}{'hits':>7}{'ms':>9}{'x plain':>9}   {'request ms':>10}")
    worst = 0.0
    for needle in ["ipsum lorem"] + NEEDLES:
        plain, took = [], []
        for _ in range(runs):
            for q, times in (("ipsum lorem", plain), (needle, took)):
                start = time.process_time()
                matching(hays, snap.odd, q)
                times.append(time.process_time() - start)
        start = time.perf_counter()
        data = client.get("/memories.json", query_string={"q": needle, "per_page": 1}).get_json()
        request = (time.perf_counter() - start) * 1e3
        ratio = min(took) / min(plain)
        if needle != "ipsum lorem" and needle not in ("lorem ipsum", "zz"):
            worst = max(worst, ratio)
        shown = repr(needle) if len(needle) < 40 else repr(needle[:30]) + f"…({len(needle)})"
        print(f"    {shown:<44}{data['total']:>7}{min(took) * 1e3:>9.1f}{ratio:>9.2f}   {request:>10.1f}")
    print(f"    worst adversarial needle: {worst:.2f}x a plain scan (goal: 3x)")
    return worst


# --- (b), (c), (d) findings --------------------------------------------------------
def bench_rules(runners: dict, runs: int, title: str) -> float:
    """Per rule: the cost of its worst adversarial content over its cost on ordinary memories."""
    ordinary = ordinary_contents()
    corpora = {family: adversarial_contents(heads=HEADS.get(family, ALL_HEADS)) for family in [*HEADS, None]}
    literal = re.compile("zq#zq")
    lit = statistics.median(cpu(literal.search, t, runs) for _l, t in ordinary)
    print(title)
    sizes = ", ".join(f"{family or 'any'} {len(c)}" for family, c in corpora.items())
    print(
        f"    (re.search of an absent literal over {SIZE:,} characters: {lit * 1e6:.1f} us;"
        f" each rule over the adversarial contents of its family: {sizes})"
    )
    print(f"    {'rule':<40}{'plain us':>9}{'worst us':>10}{'x plain':>9}   worst content")
    worst_all = 0.0
    for name, (family, fn) in runners.items():
        base = statistics.median(cpu(fn, t, runs) for _l, t in ordinary)
        costs = sorted(((cpu(fn, t, 1), label, t) for label, t in corpora[family]), reverse=True)
        cost, label = max((cpu(fn, t, runs), label) for _c, label, t in costs[:3])  # again, at leisure
        ratio = cost / max(base, 1e-7)
        worst_all = max(worst_all, ratio)
        print(f"    {name:<40}{base * 1e6:>9.1f}{cost * 1e6:>10.1f}{ratio:>9.2f}   {label}")
    return worst_all


def bench_page(rows: int) -> None:
    from dashboard.findings.scan import scan
    from dashboard.store import build_refs
    from dashboard.store.schema import create_fresh_store

    print(f"(c) findings scan (the page's), {rows} rows of each issue content:")
    for label, text in ISSUE_CONTENTS:
        root = Path(tempfile.mkdtemp(prefix="bench-redos-page-"))
        project, user = root / "p", root / "u.db"
        conn = create_fresh_store(project / ".agentao" / "memory.db")
        stamp = "2026-05-01T00:00:00"
        conn.executemany(
            "INSERT INTO memories (id, scope, type, key_normalized, title, content, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [
                (f"{i:08x}", "project", "note", f"k{i}", f"k {i}", text[:-1] + chr(97 + i % 26), stamp, stamp)
                for i in range(rows)
            ],
        )
        conn.commit()
        conn.close()
        create_fresh_store(user).close()
        start = time.perf_counter()
        report = scan(build_refs(project, user), datetime(2026, 6, 1, tzinfo=timezone.utc))
        print(f"    {label:<28}{time.perf_counter() - start:8.2f} s   ({len(report.items)} findings)")


def bench_paths(runs: int) -> None:
    """(e) The two path patterns shared with agentao, ours and agentao's, on runs of path
    characters without an extension, at 1,000 and 4,000 characters (linear: 4x; quadratic:
    16x), beside ordinary text of 4,000 (tests/test_path_patterns.py counts the tries)."""
    from agentao.memory.guards import MemoryGuard
    from agentao.prompts.helpers import extract_context_hints

    from dashboard.contract import extract_keywords
    from dashboard.engine import extract_hints

    guard = MemoryGuard()
    calls = {
        "keywords, ours": lambda s: extract_keywords("t", [], s),
        "keywords, agentao's": lambda s: guard.extract_keywords("t", [], s),
        "hints, ours": lambda s: extract_hints([s]),
        "hints, agentao's": lambda s: extract_context_hints([{"role": "user", "content": s}]),
    }
    runs_of = {
        "'x' + '/'*": lambda n: "x" + "/" * (n - 1),
        "'.'*": lambda n: "." * n,
        "'a' + '-'* + '.'": lambda n: "a" + "-" * (n - 2) + ".",
        "'a/'*": lambda n: "a/" * (n // 2),
    }
    ordinary = ("ordinary text about src/app.py and a few more words " * 100)[:4000]
    print("(e) path patterns: ms at 1,000 / 4,000 characters (ordinary text of 4,000)")
    for name, fn in calls.items():
        base = cpu(fn, ordinary, runs)
        for label, make in runs_of.items():
            short, long = cpu(fn, make(1000), runs), cpu(fn, make(4000), runs)
            print(
                f"    {name:<20}{label:<18}{short * 1e3:8.2f} {long * 1e3:8.2f}  ({base * 1e3:.2f})"
                f"  growth {long / short:5.1f}x"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=3000, help="rows of the search store")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--page-rows", type=int, default=300)
    args = ap.parse_args()
    search = bench_search(args.rows, args.runs)
    print()
    rules = bench_rules(
        rule_runners(), args.runs, f"(b) findings rules, over adversarial contents of {SIZE:,} characters"
    )
    print(f"    worst content: {rules:.2f}x the same rule on ordinary memories (goal: 3x)")
    print()
    bench_page(args.page_rows)
    print()
    bench_rules(outside_runners(), args.runs, "(d) outside items 1-2 (contract.py: agentao's own shapes)")
    print()
    bench_paths(args.runs)
    print(f"\nworst: needle {search:.2f}x, content {rules:.2f}x a plain scan (goal: 3x)")


if __name__ == "__main__":
    main()
