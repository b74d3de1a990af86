"""Which files the dashboard shows: one project store at a time (picked per request,
``web.stores``) and the optional user store, keyed ``project`` and ``user``.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

# Folders never worth descending into when looking for projects.
_SKIP = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", "site-packages"}


@dataclass(frozen=True)
class StoreRef:
    """One memory database the dashboard knows about. ``key`` is the URL segment naming the store
    (``project``, ``user``); ``kind`` says which of agentao's two roles the file plays."""

    key: str
    kind: str
    path: Path
    name: str

    @property
    def exists(self) -> bool:
        """Whether there is a file to open (or a link to one)."""
        return self.path.is_file()

    @property
    def missing(self) -> bool:
        """Whether nothing is there yet, so that agentao would create the store there."""
        return not self.exists and self.obstacle is None

    @property
    def obstacle(self) -> str | None:
        """Why what is at the path cannot be a store (a folder, a socket, a dangling link…);
        None when it is a file or when nothing is there yet (agentao would create it)."""
        return obstacle(self.path)


_KINDS = (
    (stat.S_ISDIR, _l("is a folder, not an SQLite file, so it is not a memory store")),
    (stat.S_ISSOCK, _l("is a socket, not an SQLite file, so it is not a memory store")),
    (stat.S_ISFIFO, _l("is a named pipe, not an SQLite file, so it is not a memory store")),
    (stat.S_ISCHR, _l("is a device, not an SQLite file, so it is not a memory store")),
    (stat.S_ISBLK, _l("is a device, not an SQLite file, so it is not a memory store")),
)


def obstacle(path: Path) -> str | None:
    """Why ``path`` cannot be a store file, as the end of "<path> …"; None when it is a file or
    agentao could create its store there (otherwise agentao falls back to a temporary one)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            # SQLite follows the link and creates the file at its target when that
            # folder exists; agentao then simply has no store there yet.
            target = Path(os.path.join(path.parent, os.readlink(path)))
            if os.path.isdir(target.parent):
                return None
            return _(
                "is a symbolic link to %(target)s, which does not exist and cannot be "
                "created there (no such folder); it is not a memory store",
                target=os.readlink(path),
            )
        return _blocked_folder(path)
    except NotADirectoryError:
        return _blocked_folder(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return _("is a symbolic link that loops back on itself; it is not a memory store")
        return _("cannot be looked at (%(error)s)", error=exc.strerror or exc)
    if stat.S_ISREG(mode):
        return None
    said = next((said for test, said in _KINDS if test(mode)), None)
    return (
        str(said)
        if said is not None
        else _("is something other than a file, not an SQLite file, so it is not a memory store")
    )


def _blocked_folder(path: Path) -> str | None:
    # Nothing at the path: agentao creates it, unless a folder on the way is a file.
    for parent in path.parents:
        if os.path.lexists(parent):
            if os.path.isdir(parent):
                return None
            return _(
                "cannot be created: %(parent)s is a file, not a folder, so agentao cannot keep a store there",
                parent=parent,
            )
    return None


@dataclass(frozen=True)
class Workspace:
    """The projects the dashboard was started with, and the shared user store."""

    project_dirs: tuple[Path, ...]
    user_db: Path | None

    def project_names(self) -> list[str]:
        """Display names: the folder name, made unique by its parent when two clash."""
        names = [d.resolve().name or str(d) for d in self.project_dirs]
        return [
            f"{n} ({d.resolve().parent.name})" if names.count(n) > 1 else n
            for n, d in zip(names, self.project_dirs)
        ]

    def refs(self, index: int = 0) -> list[StoreRef]:
        """Project store ``index`` first, then the user store when one is configured."""
        return build_refs(self.project_dirs[index], self.user_db, self.project_names()[index])

    def project_refs(self) -> list[StoreRef]:
        """Every project's store (each keyed ``project``; use with care)."""
        return [self.refs(i)[0] for i in range(len(self.project_dirs))]


def project_db_path(project_dir: Path) -> Path:
    """Where agentao keeps a project's store (contract §1)."""
    return Path(project_dir) / ".agentao" / "memory.db"


def store_path(path: Path) -> Path:
    """``path``, or the file it links to: SQLite keeps the side files beside the target, so
    every read, write, purge and check must name it."""
    path = Path(path)
    if not path.is_symlink():
        return path
    target = path.resolve()
    # A link to nowhere SQLite could create a file stays the link, so that
    # ``obstacle`` can say what it is.
    return target if target.exists() or target.parent.is_dir() else path


def default_user_db() -> Path:
    """Where agentao keeps the user store (contract §1)."""
    return Path.home() / ".agentao" / "memory.db"


def build_refs(project_dir: Path, user_db: Path | None, name: str | None = None) -> list[StoreRef]:
    """Project store first, then the user store when one is configured."""
    project_dir = Path(project_dir)
    refs = [
        StoreRef(
            "project",
            "project",
            store_path(project_db_path(project_dir)),
            name or project_dir.resolve().name or str(project_dir),
        )
    ]
    if user_db is not None:
        refs.append(StoreRef("user", "user", store_path(user_db), "user store"))
    return refs


def scan_projects(root: Path, limit: int = 500, refused: list[tuple[Path, str]] | None = None) -> list[Path]:
    """Project folders below ``root`` holding ``.agentao/memory.db``, sorted, at most ``limit``;
    a link to a file outside ``root`` (or to nothing) is left out and named in ``refused``."""
    found = []
    top = Path(root).resolve()
    for here, dirs, files in os.walk(root):
        if os.path.basename(here) == ".agentao":
            if "memory.db" in files:
                reason = _outside(Path(here) / "memory.db", top)
                if reason is None:
                    found.append(Path(here).parent)
                elif refused is not None:
                    refused.append((Path(here).parent, reason))
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and (d == ".agentao" or not d.startswith(".")))
        if len(found) >= limit:
            break
    return sorted(found)


def _outside(db: Path, top: Path) -> str | None:
    # Why a scan leaves this store out, or None when the file is in the tree.
    if not db.is_symlink():
        return None
    target = db.resolve()
    if not target.is_file():
        return f"{db} is a symbolic link to {target}, which is not a file"
    if not target.is_relative_to(top):
        return (
            f"{db} is a symbolic link to {target}, outside {top}; pass --project "
            f"{db.parent.parent} to open it on purpose"
        )
    return None


def ref_for(refs: Iterable[StoreRef], key: str) -> StoreRef | None:
    """The store with this key ("project" or "user") among ``refs``, or None."""
    return next((ref for ref in refs if ref.key == key), None)
