"""How each memory of the demo is linked to a conversation: exact (a crystallized memory's
approved suggestion), ambiguous, none; explicit and automatic saves by time: within one
conversation's recorded span, several, or none.  Prints counts; changes nothing.

    python bench/bench_conversation_links.py
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from dashboard import create_app
from dashboard.demo import build_demo


def main() -> None:
    project_dir, user_db = build_demo(Path(tempfile.mkdtemp()))
    client = create_app(
        {"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False}
    ).test_client()
    convs = client.get("/conversations.json").get_json()["conversations"]
    print(f"conversations: {len(convs)}")
    for c in convs:
        print(
            f"  {c['session_id']}: {c['first']} .. {c['last']}, {c['summaries']} summaries, "
            f"{sum(c['suggestions'].values())} suggestions"
        )
    counts: Counter = Counter()
    page, pages = 1, 1
    while page <= pages:
        listing = client.get(f"/memories.json?per_page=100&page={page}&deleted=1").get_json()
        pages = listing["pages"]
        for m in listing["items"]:
            prov = client.get(f"/memories/{m['store']}/{m['id']}.json").get_json()["provenance"]
            if prov["match"] != "by time":
                counts["crystallized, " + prov["match"]] += 1
                continue
            for save in prov["saves"]:
                n = len(save["active"])
                counts[
                    "save by time, "
                    + (
                        "no conversation"
                        if n == 0
                        else "one conversation"
                        if n == 1
                        else "several (ambiguous)"
                    )
                ] += 1
        page += 1
    for what, n in sorted(counts.items()):
        print(f"{what}: {n}")


if __name__ == "__main__":
    main()
