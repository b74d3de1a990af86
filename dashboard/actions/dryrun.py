"""The dry run's fingerprint: the confirmed rows, carried by the purge form.

The form names each row's kind and id with the digest of its columns (events, which agentao
never changes, by id alone, as runs of integers); the purge re-reads them inside its write
transaction.  JSON, zlib, base64url: about 13 bytes a row.  A plan larger than ``MAX_TOKEN``
must be purged a category at a time.  Nothing in it is secret or trusted: a forged one can
only name rows, which are then checked as any.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterable
from itertools import pairwise

from ..store.plan import KINDS, PlanRow

VERSION = "1."
MAX_TOKEN = 768 * 1024  # under the form limit (MAX_CONTENT_LENGTH, 1 MB)
MAX_JSON = 64 * 1024 * 1024  # decompressed: a bomb stops here
_DIGEST = re.compile(r"[0-9a-f]{1,64}")


def fingerprint(rows: Iterable[PlanRow]) -> str:
    """The token naming ``rows`` (PlanRows): what the purge form posts back."""
    named: dict[str, list[list[str]]] = {}
    events: list[int] = []
    for r in rows:
        if r.kind == "event" and r.id.isdigit():
            events.append(int(r.id))
        else:
            named.setdefault(r.kind, []).append([r.id, r.digest])
    ids = sorted(set(events))
    body = {
        "rows": {k: sorted(v) for k, v in named.items()},
        "events": [b - a for a, b in pairwise([0, *ids])],
    }
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    return VERSION + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii")


_JSON_PER_ROW = 48  # a named row takes about 30 characters of JSON, an event 2 or more


def rows_of(token: str, most: int | None = None) -> list[PlanRow]:
    """The rows a token names, without texts; ValueError when it is not one of ours, or when
    it names more than ``most`` rows (what the store can hold: ``store.purge.most_rows``).
    Sizes are checked before anything is built: its JSON may not inflate past what ``most``
    rows take, and the rows are counted before one is made (a 2 KiB token can name a
    million events)."""
    if not isinstance(token, str) or not token.startswith(VERSION) or len(token) > MAX_TOKEN:
        raise ValueError("not a dry run's fingerprint")
    limit = MAX_JSON if most is None else min(MAX_JSON, 1024 + _JSON_PER_ROW * most)
    try:
        packed = base64.urlsafe_b64decode(token[len(VERSION) :].encode("ascii"))
        inflate = zlib.decompressobj()
        raw = inflate.decompress(packed, limit)
        if inflate.unconsumed_tail:
            raise ValueError("too large")
        body = json.loads(raw.decode("utf-8", "surrogatepass"))
    except (binascii.Error, zlib.error, UnicodeError, ValueError) as exc:
        raise ValueError("not a dry run's fingerprint") from exc
    try:
        named = sum(len(v) for v in body["rows"].values()) + len(body["events"])
        if most is not None and named > most:
            raise ValueError("it names more rows than the store holds")
        rows = [
            PlanRow(kind, i, digest=d)
            for kind in KINDS
            for i, d in body["rows"].get(kind, [])
            if isinstance(i, str) and isinstance(d, str) and (d == "" or _DIGEST.fullmatch(d))
        ]
        if sum(len(v) for v in body["rows"].values()) != len(rows) or set(body["rows"]) - set(KINDS):
            raise ValueError("a row it names is not one")
        at = 0
        for step in body["events"]:
            if not isinstance(step, int) or step < 0:
                raise ValueError("an event it names is not one")
            at += step
            rows.append(PlanRow("event", str(at)))
    except (AttributeError, KeyError, TypeError) as exc:
        raise ValueError("not a dry run's fingerprint") from exc
    return rows


def fits(token: str) -> bool:
    """Whether one purge form can carry ``token``."""
    return len(token) <= MAX_TOKEN
