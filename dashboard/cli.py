"""Command line: parse arguments, optionally build the demo, serve with waitress."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
import unicodedata
from gettext import NullTranslations
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote, urlencode

from .guard.invisible import escaped
from .store import default_user_db
from .store.registry import scan_projects

DEFAULT_PORT = 8765
TOKEN_ENV = "AGENTAO_DASHBOARD_TOKEN"


def _(message: str, **values) -> str:
    """The command line's own words in its language (``set_language``), like the pages'."""
    text = _translations.gettext(message)
    return text % values if values else text


def set_language(argv) -> str:
    """Pick the language of the help and start-up lines before argparse speaks: ``--lang``,
    else the environment's (LANGUAGE / LC_ALL / LC_MESSAGES / LANG: any ``zh`` is Simplified
    Chinese), else English.  The pages follow ``--lang`` too, or else the browser."""
    global _translations
    from babel.support import Translations

    from . import PACKAGE_ROOT
    from .words import LOCALES

    wanted = None
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            wanted = argv[i + 1]
        elif arg.startswith("--lang="):
            wanted = arg.partition("=")[2]
    if wanted not in LOCALES:
        env = next(
            (os.environ[k] for k in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG") if os.environ.get(k)), ""
        )
        wanted = "zh_Hans_CN" if env.lower().startswith("zh") else "en"
    _translations = Translations.load(str(PACKAGE_ROOT / "translations"), [wanted])
    return wanted


_translations: NullTranslations = NullTranslations()  # English until set_language


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentao-memory-dashboard",
        description=_(
            "Local web dashboard over agentao's memory databases "
            "(<project>/.agentao/memory.db and ~/.agentao/memory.db)."
        ),
    )
    p.add_argument(
        "--project",
        metavar="DIR",
        action="append",
        default=[],
        help=_(
            "agentao project folder (default: the current directory); its store is "
            "DIR/.agentao/memory.db. Repeat to show several projects"
        ),
    )
    p.add_argument(
        "--scan",
        metavar="DIR",
        action="append",
        default=[],
        help=_("add every project below DIR that has a .agentao/memory.db (repeatable)"),
    )
    users = p.add_mutually_exclusive_group()
    users.add_argument(
        "--user-db",
        metavar="PATH",
        default=None,
        help=_("user store (default: %(path)s)", path=default_user_db()),
    )
    users.add_argument("--no-user-db", action="store_true", help=_("show no user store"))
    p.add_argument("--host", default="127.0.0.1", help=_("address to listen on (default 127.0.0.1)"))
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=_("port (default %(port)d; 0 picks a free one)", port=DEFAULT_PORT),
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help=_("build a throw-away demo project in a temporary folder and show it"),
    )
    p.add_argument("--read-only", action="store_true", help=_("never write to any store"))
    tokens = p.add_mutually_exclusive_group()
    tokens.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV) or None,
        help=_(
            "access token for scripts (Authorization: token ...) and the login "
            "form (default: a fresh random one; the start-up URL carries a "
            "one-time code instead; $%(env)s also sets it, without showing "
            "it in ps). At least 16 printable characters, about 64 bits or more",
            env=TOKEN_ENV,
        ),
    )
    tokens.add_argument(
        "--no-token",
        action="store_true",
        help=_("require no token (loopback addresses only; any local user can then read and erase memories)"),
    )
    p.add_argument("--threads", type=int, default=8, help=_("waitress worker threads (default 8)"))
    p.add_argument(
        "--cjk",
        choices=("auto", "on", "off"),
        default="auto",
        help=_(
            "tokenize Chinese/Japanese/Korean text as the AGENT does: 'on' with jieba "
            "(agentao[i18n]), 'off' without it, 'auto' (default) as the agentao command "
            "on PATH does: with jieba when its Python finds jieba"
        ),
    )
    from .words import LOCALES

    p.add_argument(
        "--lang",
        choices=list(LOCALES),
        default=None,
        help=_(
            "the language of these lines and of the pages (default: the browser's "
            "choice for the pages, the environment's for these lines)"
        ),
    )
    return p


def _fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Exit 2 with argparse's "error:" line, without the usage: the message says what to change."""
    parser.exit(2, f"agentao-memory-dashboard: error: {message}\n")


def config_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict:
    """Validate paths and turn arguments into create_app() config; exits 2 on bad input."""
    if args.demo:
        from .demo import build_demo

        project_dir, demo_db = build_demo()
        args.demo_root = project_dir.parent  # ours (a fresh temp folder): main removes it
        # "Demo data: <path>" starts the line in every language (scripts and tests read it).
        print(
            "Demo data: " + _("%(path)s (deleted when the dashboard stops)", path=project_dir.parent),
            flush=True,
        )
        projects = [project_dir] + sorted(
            p
            for p in project_dir.parent.iterdir()
            if p.is_dir() and p not in (project_dir, demo_db.parent.parent) and (p / ".agentao").is_dir()
        )
        return {
            "PROJECT_DIR": projects,
            "USER_DB": None if args.no_user_db else demo_db,
            "READ_ONLY": args.read_only,
        }
    projects = [Path(p) for p in args.project]
    for project_dir in projects:
        if not project_dir.is_dir():
            _fail(parser, f"project folder {escaped(project_dir)} does not exist")
    for root in map(Path, args.scan):
        if not root.is_dir():
            _fail(parser, f"--scan folder {escaped(root)} does not exist")
        refused: list = []
        found = scan_projects(root, refused=refused)
        for _folder, reason in refused:
            print(f"agentao-memory-dashboard: --scan left out {escaped(reason)}", file=sys.stderr)
        if not found:
            _fail(parser, f"no .agentao/memory.db below {escaped(root)}")
        projects.extend(found)
    projects = list(dict.fromkeys(p.resolve() for p in projects)) or [Path.cwd()]
    user_db = None if args.no_user_db else Path(args.user_db) if args.user_db else default_user_db()
    if user_db is not None and user_db.is_dir():
        _fail(parser, f"user store {escaped(user_db)} is a directory, not a file")
    if not 0 <= args.port <= 65535:
        _fail(parser, f"port {args.port} is out of range")
    return {"PROJECT_DIR": projects, "USER_DB": user_db, "READ_ONLY": args.read_only}


def token_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str | bool:
    """The access token to require (False = none); warns on stderr, exits 2 on bad input."""
    from .guard.access import token_problem
    from .guard.security import generate_token, is_loopback

    if args.no_token:
        if not is_loopback(args.host):
            _fail(parser, f"--no-token is only allowed on a loopback address, not {args.host}")
        print(
            "WARNING: --no-token: any program or user on this machine can read and erase "
            "memories through the dashboard.",
            file=sys.stderr,
            flush=True,
        )
        return False
    problem = None if args.token is None else token_problem(args.token)
    if problem:
        _fail(parser, problem)
    if not is_loopback(args.host):
        print(
            f"WARNING: listening on {args.host}: other machines can reach the dashboard. "
            "The token is required, but traffic is plain HTTP (no TLS).",
            file=sys.stderr,
            flush=True,
        )
    return args.token or generate_token()


def cjk_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The CJK setting; ``on`` without jieba exits 2 now rather than previewing wrongly."""
    if args.cjk == "on":
        from .engine.tokenize import tokenizer_for

        try:
            tokenizer_for("on")
        except ImportError:
            _fail(
                parser,
                "--cjk on needs jieba, which cannot be imported here (pip install jieba, or "
                "--cjk off if the agent runs without it)",
            )
    return args.cjk


def warm_up(app) -> None:
    """Read the stores' snapshots while the user opens the browser (a second or two at
    100,000 memories, which the first page would wait for).  Only reads."""
    from .store.snapshot import rows_of

    try:
        for ref in app.extensions["workspace"].refs(0):
            if ref.exists:
                rows_of(ref)
    except Exception:  # noqa: BLE001 - the first request meets and reports the same problem
        pass


def start_url(app, host: str, port: int) -> str:
    """The URL to open: with a token, a one-time login link under the prefix."""
    if not app.config["AUTH_TOKEN"]:
        return f"http://{host}:{port}/"
    code = app.extensions["access"].new_code()
    path = quote(app.config["URL_PREFIX"] + "/login")
    return f"http://{host}:{port}{path}?{urlencode({'code': code})}"


def _stop_on_sigterm() -> None:
    """SIGTERM (a service manager, ``kill``) ends the server as Ctrl+C does, so the
    ``finally`` that removes the demo folder runs; Python's default would just exit."""

    def stop(_signum, _frame):
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def check(argv: list[str]) -> int:
    """``agentao-memory-dashboard check``: every memory check, run without starting the server.

    The same app and function as ``/checks.json`` (``collect``), in a request context that
    serves no one, so the table says exactly what the screen says.  Writes nothing."""
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
    from . import create_app
    from .views.checks import collect

    with create_app(config).test_request_context("/checks.json"):
        data = collect()
    failed = 1 if data["failed"] or data["tied"] or data["problems"] else 0  # a tie proves nothing
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return failed
    rows = [
        (_("pass") if c["passed"] else _("TIE") if c["tie"] else _("FAIL"), c["name"], " ".join(c["why"]))
        for c in data["checks"]
    ]
    width = max((_columns(r[0]) for r in rows), default=0)
    name_width = min(40, max((_columns(r[1]) for r in rows), default=0))
    for result, name, why in rows:
        while _columns(name) > name_width:
            name = name[:-1]
        print(f"{_pad(result, width)}  {_pad(name, name_width)}  {why}")
    for key, problem in data["problems"].items():
        print(f"{key}: {problem}", file=sys.stderr)
    print(_("%(failed)d of %(total)d checks fail.", failed=data["failed"], total=data["total"]))
    if data["tied"]:
        print(_("Depending on a tie at the recall cut (neither pass nor fail): %(num)d.", num=data["tied"]))
    return failed


def _columns(text: str) -> int:
    """How many terminal columns ``text`` takes: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _columns(text))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    set_language(argv)
    if argv[:1] == ["check"]:  # run the memory checks, print them, exit 1 when one fails
        return check(argv[1:])
    if argv[:1] == ["link"]:  # a new one-time login link for the dashboard running
        from .guard import links

        return links.run(argv[1:], _)
    parser = build_parser()
    args = parser.parse_args(argv)
    token = token_from_args(args, parser)
    args.demo_root = None
    _stop_on_sigterm()
    try:
        return _serve(args, parser, token)
    except KeyboardInterrupt:
        return 0
    finally:
        # The throw-away demo is removed on every way out: a normal exit, Ctrl+C,
        # SIGTERM, or a start-up error after it was built (a port already in use).
        if args.demo_root is not None:
            shutil.rmtree(args.demo_root, ignore_errors=True)


def _malloc_settings() -> None:
    """Two settings of glibc's malloc, as MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=1048576
    would make them; elsewhere, nothing.  Both measured with bench/bench_rss.py at 1,000
    memories (RSS after every screen) and bench/bench_pages.py (page times unchanged):

    - two arenas: glibc gives each busy thread an arena of its own, and with eight workers
      the server held about 10 MiB more than with two;
    - blocks over 1 MiB always from mmap, given back when freed: by default glibc raises that
      threshold to the largest block freed so far (up to 32 MiB; jieba's dictionary load
      frees several MiB at once), after which page-sized blocks come from the heap, whose
      freed middle is never given back: about 4 MiB more after every screen, kept for good."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
        mallopt(-8, 2)  # M_ARENA_MAX, before any worker thread starts
        mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD (setting it also stops glibc moving it)
    except (OSError, AttributeError):
        pass


def _serve(args: argparse.Namespace, parser: argparse.ArgumentParser, token) -> int:
    _malloc_settings()
    config = config_from_args(args, parser)
    config["AUTH_TOKEN"] = token
    config["CJK"] = cjk_from_args(args, parser)
    config["LANG"] = args.lang

    from waitress import create_server

    from . import create_app
    from .guard.access import new_prefix

    # A random path per start; the cookie's Path is scoped to it (see security.py).
    config["URL_PREFIX"] = new_prefix() if token else ""
    app = create_app(config)
    if not config.get("READ_ONLY"):
        from .actions.twofile import recover

        for report in recover(app):  # an action a kill stopped half way: finished first
            print(report["text"], flush=True)
    # waitress reads a whole body before the app sees the request (and its Host and
    # token checks), spilling it to a temp file past inbuf_overflow.  Refuse a larger
    # body than the app takes while reading the headers (">=" in waitress, so +1),
    # and keep the ones it takes in memory: no request body ever touches the disk.
    # A chunked body has no length to refuse up front: waitress counts it as it
    # arrives and buffers one read (8 KiB) before the count refuses it, so the
    # in-memory buffer needs a read's margin over the limit or that read spills.
    limit = app.config.get("MAX_CONTENT_LENGTH")
    bounds = (
        {} if limit is None else {"max_request_body_size": limit + 1, "inbuf_overflow": limit + 1 + (1 << 16)}
    )
    try:
        server = create_server(app, host=args.host, port=args.port, threads=args.threads, **bounds)
    except OSError as exc:
        _fail(parser, f"cannot listen on {args.host}:{args.port} ({exc})")
    from .guard.waitress_errors import harden

    harden(server)  # waitress's own 400/413/431 answers get the security headers too
    port = server.socket.getsockname()[1]
    from .guard.security import allowed_hosts

    # The port is known only now (--port 0); the Host allow-list needs it.
    app.config.update(PORT=port, ALLOWED_HOSTS=allowed_hosts(args.host, port))
    host = args.host if args.host not in ("0.0.0.0", "::") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    from .guard import links

    base = f"http://{host}:{port}{quote(app.config['URL_PREFIX'])}"
    try:
        link_file = links.write(port, base, app.extensions["access"].link_key if token else None)
    except OSError as exc:  # a read-only home: the printed link still works, once
        link_file = None
        print(f"agentao-memory-dashboard: cannot write {links.folder()} ({exc})", file=sys.stderr)
    if token:
        print(
            _("Open this link in your browser; it logs you in once: %(url)s", url=start_url(app, host, port)),
            flush=True,
        )
    else:
        print(_("Open this address in your browser: %(url)s", url=start_url(app, host, port)), flush=True)
    print(_("Press Ctrl+C to stop."), end=" ", flush=True)
    if link_file is not None and token:
        print(
            _("For a new link later (another browser, or a closed one): %(command)s", command=links.COMMAND),
            end="",
        )
    print(flush=True)
    threading.Thread(target=warm_up, args=(app,), name="warm-up", daemon=True).start()
    try:
        server.run()
    except KeyboardInterrupt:
        pass  # waitress's run() stops its workers on Ctrl+C itself
    finally:
        links.remove(link_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
