"""agentao memory dashboard: a local web UI over agentao's two memory databases."""

from __future__ import annotations

import os
from pathlib import Path

from flask import Flask, redirect, url_for

PACKAGE_ROOT = Path(__file__).resolve().parent

DEFAULTS = {
    "PROJECT_DIR": None,  # agentao project folder, or a list of them; None = current directory
    "USER_DB": "default",  # path of the user store; None = no user store
    "READ_ONLY": False,  # refuse every write, whatever the files allow
    "MAX_CONTENT_LENGTH": 1024 * 1024,
    "AUTH_TOKEN": None,  # None = generate one; False or "" = no token (loopback only)
    "ALLOWED_HOSTS": None,  # Host header values; None = loopback names on any port
    "CJK": "auto",  # the agent's jieba: auto (if importable here), on, off
    "LANG": None,  # the pages' language (words.LOCALES); None = the browser's choice
    "CLOCK": None,  # a callable giving an aware datetime: now (clock.py); None = system
}


def create_app(config: dict | None = None) -> Flask:
    """Build the dashboard app.  Importing this package opens no file; this does neither."""
    from . import errors, facts, web
    from .guard import login, security
    from .store import default_user_db
    from .store.registry import Workspace
    from .views import ALL_BLUEPRINTS

    app = Flask(
        __name__, template_folder=str(_asset_dir("templates")), static_folder=str(_asset_dir("static"))
    )
    app.config.from_mapping(DEFAULTS)
    app.config.update(config or {})
    from .engine.tokenize import CJK_SETTINGS

    if app.config["CJK"] not in CJK_SETTINGS:
        raise ValueError(f"CJK must be one of {', '.join(CJK_SETTINGS)}, not {app.config['CJK']!r}")
    from .words import LOCALES

    if app.config["LANG"] not in (None, *LOCALES):
        raise ValueError(f"LANG must be one of {', '.join(LOCALES)}, not {app.config['LANG']!r}")
    projects = app.config["PROJECT_DIR"] or os.getcwd()
    if isinstance(projects, (str, os.PathLike)):
        projects = [projects]
    user_db = app.config["USER_DB"]
    if user_db == "default":
        user_db = default_user_db()
    app.config["PROJECT_DIR"] = Path(projects[0])
    app.config["USER_DB"] = None if user_db is None else Path(user_db)
    app.extensions["workspace"] = Workspace(tuple(Path(p) for p in projects), app.config["USER_DB"])
    from .actions import twofile  # noqa: F401 - registers the finishers of stopped two-file actions
    from .store import intents  # where a stopped two-file action's record is looked for

    intents.watch(*[r.path for r in app.extensions["workspace"].project_refs()], app.config["USER_DB"])

    from . import clock

    clock.use(app.config["CLOCK"])  # code without Flask reads it; every request sets it again
    app.before_request(lambda: clock.use(app.config["CLOCK"]))
    security.init_app(app)
    app.register_blueprint(login.bp)
    web.init_app(app)
    facts.init_app(app)
    errors.init_app(app)
    for blueprint in ALL_BLUEPRINTS:
        app.register_blueprint(blueprint)
    # Browsers fetch /favicon.ico on their own; a 404 there is an error in every console.
    app.add_url_rule("/favicon.ico", "favicon", lambda: redirect(url_for("static", filename="favicon.svg")))
    return app


def _asset_dir(name: str) -> Path:
    # Installed wheels carry templates/ and static/ inside the package (see
    # pyproject.toml); a source checkout has them at the top level.
    inside = PACKAGE_ROOT / name
    return inside if inside.is_dir() else PACKAGE_ROOT.parent / name
