"""Command line: parse arguments, optionally build the demo, serve with waitress."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .store import default_user_db

DEFAULT_PORT = 8765


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentao-memory-dashboard",
        description="Local web dashboard over agentao's memory databases "
                    "(<project>/.agentao/memory.db and ~/.agentao/memory.db).")
    p.add_argument("--project", metavar="DIR", default=None,
                   help="agentao project folder (default: the current directory); "
                        "its store is DIR/.agentao/memory.db")
    users = p.add_mutually_exclusive_group()
    users.add_argument("--user-db", metavar="PATH", default=None,
                       help=f"user store (default: {default_user_db()})")
    users.add_argument("--no-user-db", action="store_true", help="show no user store")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--demo", action="store_true",
                   help="build a throw-away demo project in a temporary folder and show it")
    p.add_argument("--read-only", action="store_true", help="never write to any store")
    p.add_argument("--threads", type=int, default=8, help="waitress worker threads (default 8)")
    return p


def config_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict:
    """Validate paths and turn arguments into create_app() config; exits 2 on bad input."""
    if args.demo:
        from .demo import build_demo
        project_dir, user_db = build_demo()
        print(f"Demo data: {project_dir.parent}", flush=True)
        return {"PROJECT_DIR": project_dir, "USER_DB": None if args.no_user_db else user_db,
                "READ_ONLY": args.read_only}
    project_dir = Path(args.project) if args.project else Path.cwd()
    if not project_dir.is_dir():
        parser.exit(2, f"agentao-memory-dashboard: error: project folder {project_dir} does not exist\n")
    user_db = None if args.no_user_db else Path(args.user_db) if args.user_db else default_user_db()
    if user_db is not None and user_db.is_dir():
        parser.exit(2, f"agentao-memory-dashboard: error: user store {user_db} is a directory, not a file\n")
    if not 0 <= args.port <= 65535:
        parser.exit(2, f"agentao-memory-dashboard: error: port {args.port} is out of range\n")
    return {"PROJECT_DIR": project_dir, "USER_DB": user_db, "READ_ONLY": args.read_only}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    config = config_from_args(args, parser)

    from waitress import create_server

    from . import create_app
    app = create_app(config)
    try:
        server = create_server(app, host=args.host, port=args.port, threads=args.threads)
    except OSError as exc:
        parser.exit(2, f"agentao-memory-dashboard: error: cannot listen on {args.host}:{args.port} ({exc})\n")
    port = server.socket.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"agentao memory dashboard (waitress) on http://{host}:{port}/", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
