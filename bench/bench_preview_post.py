"""POST /preview's page weight (#30): the form's 4,000-character Chinese message, in process.

The stores are bench_pages.py's (same builder, same seed: agentao creates the schema, rows
filled as a person's store looks), the message is its ``LONG_CHINESE``.  Printed per size:
the bytes of the whole page (no JavaScript), of the htmx fragment, and of the GET preview
with a three-word message, each beside the 100 KB goal.  ``PYTHONPATH=<tree>`` measures
another source tree (e.g. ``git archive <commit> | tar -x -C /tmp/before``).

    python bench/bench_preview_post.py                     # 1,000 and 10,000 memories
    python bench/bench_preview_post.py --sizes 1000 --keep /tmp/stores
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_pages  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--keep", type=Path, help="build the stores here once and reuse them")
    args = ap.parse_args()
    import dashboard

    print(f"tree: {Path(dashboard.__file__).parent.parent}")
    for count in args.sizes:
        root = (args.keep or Path(tempfile.mkdtemp())) / str(count)
        client = bench_pages.client_over(root, count)
        form = {"q": bench_pages.LONG_CHINESE}
        htmx = {"HX-Request": "true"}
        asks = [
            ("POST /preview (4,000 Chinese characters), page", "POST", {"data": form}),
            ("POST /preview (4,000 Chinese characters), htmx", "POST", {"data": form, "headers": htmx}),
            (f"GET /preview?q={bench_pages.THREE}", "GET", {"query_string": {"q": bench_pages.THREE}}),
        ]
        for name, method, kwargs in asks:
            r = client.open("/preview", method=method, **kwargs)
            size = len(r.data)
            goal = "ok" if size <= 100 * 1024 else "MISS"
            print(
                f"{count:>7,}  {name:<55} {r.status_code}  {size:>8,} B  {size / 1024:6.1f} KB  <= 100 KB: {goal}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
