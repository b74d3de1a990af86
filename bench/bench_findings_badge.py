"""What the Findings tab's count costs on every page, at 1,000 and 10,000 memories.

Every page draws the tabs, so ``web.NAV_BADGES["findings.index"]`` runs on every
page.  Two ways it could get its count:

  held  -- only a scan already held for the files as they are now (the one the
           findings page, or a screen marking rows, made); else no badge.
           Its cost: the files' stamps, compared with the held scan's.
  scan  -- ``current_report()`` on every page: free while the held scan is
           reused (60 s, files unchanged), a whole scan after any write.

Printed per size: a page (``/summaries``, small) with no held scan, with a held
scan and the badge drawn, the badge function alone, and a fresh bounded scan (what
the first page after each write would pay under "scan").  Medians of ``--runs``.

    python bench/bench_findings_badge.py            # 1,000 and 10,000
    python bench/bench_findings_badge.py --sizes 1000,10000,50000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_findings import build_store  # noqa: E402

from dashboard import create_app  # noqa: E402
from dashboard.views import findings  # noqa: E402
from dashboard.web import NAV_BADGES  # noqa: E402


def ms(f, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def measure(n: int, runs: int) -> dict:
    now = datetime.now(timezone.utc)
    root = Path(tempfile.mkdtemp(prefix="bench-badge-"))
    project_dir, user_db = build_store(root, n, now.replace(tzinfo=None))
    app = create_app({"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    client = app.test_client()
    page = "/summaries"

    def get():
        r = client.get(page)
        assert r.status_code == 200
        return r.get_data(as_text=True)

    def drop_scan():  # the scan held for the screens (store.held), and nothing else
        from dashboard.store import held

        with held._lock:
            for key in [k for k in held._table if k[0] == "findings"]:
                del held._table[key]

    get()  # warm: templates compiled, snapshots read
    drop_scan()
    no_scan = ms(get, runs)
    assert 'data-tab="findings"' in get() and "data-count" not in get().split('data-tab="findings"')[1][:80]

    def fresh_scan():
        drop_scan()
        with app.test_request_context("/findings"):
            findings.current_report()

    scan_ms = ms(fresh_scan, max(1, runs // 3))
    with app.test_request_context("/findings"):
        report, _at, _reused = findings.current_report()
    held_page = ms(get, runs)
    with app.test_request_context(page):
        badge_alone = ms(NAV_BADGES["findings.index"], runs)
        badge = NAV_BADGES["findings.index"]()
    return {
        "n": n,
        "findings": len(report.items),
        "complete": report.complete,
        "badge": badge.count if badge and not badge.later else None,
        "page_no_scan": no_scan,
        "page_held": held_page,
        "badge_alone": badge_alone,
        "scan": scan_ms,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    print(
        f"{'memories':>9} {'findings':>9} {'badge':>6} {'page, no scan':>14} {'page, held':>11} "
        f"{'badge fn':>9} {'fresh scan':>11}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        r = measure(n, args.runs)
        print(
            f"{r['n']:>9,} {r['findings']:>9,} {str(r['badge']):>6} {r['page_no_scan']:>11.1f} ms "
            f"{r['page_held']:>8.1f} ms {r['badge_alone']:>6.2f} ms {r['scan']:>8.0f} ms"
            f"{'' if r['complete'] else ' (cut: time limit)'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
