"""``agentao-memory-dashboard check``: every memory check, run without starting the server.

The same app and the same function as ``/checks.json`` (``collect``), inside a request
context that serves no one, so the table says exactly what the screen says.  Writes nothing.
"""

from __future__ import annotations

import json
import sys

from ...cli import _, build_parser, cjk_from_args, config_from_args, set_language


def run(argv: list[str]) -> int:
    parser = build_parser()
    parser.prog = "agentao-memory-dashboard check"
    parser.add_argument("--json", action="store_true", help=_("print the results as JSON (for scripts)"))
    args = parser.parse_args(argv)
    if args.demo:
        parser.exit(2, "agentao-memory-dashboard check: error: --demo has no checks to run\n")
    config = config_from_args(args, parser)
    config.update(
        AUTH_TOKEN=False,
        READ_ONLY=True,
        CHECKS_TIME_LIMIT_MS=None,
        CJK=cjk_from_args(args, parser),
        LANG=set_language(argv),
    )
    from ... import create_app
    from . import collect

    app = create_app(config)
    with app.test_request_context("/checks.json"):
        data = collect()
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        _table(data)
    return 1 if data["failed"] or data["problems"] else 0


def _table(data: dict) -> None:
    rows = [(_("pass") if c["passed"] else _("FAIL"), c["name"], " ".join(c["why"])) for c in data["checks"]]
    width = max(len(r[0]) for r in rows)
    name_width = min(40, max(len(r[1]) for r in rows))
    for result, name, why in rows:
        print(f"{result:<{width}}  {name[:name_width]:<{name_width}}  {why}")
    for key, problem in data["problems"].items():
        print(f"{key}: {problem}", file=sys.stderr)
    print(_("%(failed)d of %(total)d checks fail.", failed=data["failed"], total=data["total"]))
