"""Which files the dashboard shows: one or more project stores and the optional user store.

agentao gives every project its own store and shares one user store between
them.  The dashboard shows one project at a time beside the user store; the
current project is picked per request (see ``web.stores``), so every screen
keeps speaking of just two stores, keyed ``project`` and ``user``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# Folders never worth descending into when looking for projects.
_SKIP = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", "site-packages"}


@dataclass(frozen=True)
class StoreRef:
    """One memory database the dashboard knows about.

    ``key`` is the URL segment naming the store (``project``, ``user``);
    ``kind`` says which of agentao's two roles the file plays.
    """

    key: str
    kind: str
    path: Path
    name: str

    @property
    def exists(self) -> bool:
        return self.path.is_file()


@dataclass(frozen=True)
class Workspace:
    """The projects the dashboard was started with, and the shared user store."""

    project_dirs: tuple[Path, ...]
    user_db: Path | None

    def project_names(self) -> list[str]:
        """Display names: the folder name, made unique by its parent when two clash."""
        names = [d.resolve().name or str(d) for d in self.project_dirs]
        return [f"{n} ({d.resolve().parent.name})" if names.count(n) > 1 else n
                for n, d in zip(names, self.project_dirs)]

    def refs(self, index: int = 0) -> list[StoreRef]:
        """Project store ``index`` first, then the user store when one is configured."""
        return build_refs(self.project_dirs[index], self.user_db, self.project_names()[index])

    def project_refs(self) -> list[StoreRef]:
        """Every project's store (each keyed ``project``; use with care)."""
        return [self.refs(i)[0] for i in range(len(self.project_dirs))]


def project_db_path(project_dir: Path) -> Path:
    """Where agentao keeps a project's store (contract §1)."""
    return Path(project_dir) / ".agentao" / "memory.db"


def default_user_db() -> Path:
    """Where agentao keeps the user store (contract §1)."""
    return Path.home() / ".agentao" / "memory.db"


def build_refs(project_dir: Path, user_db: Path | None, name: str | None = None) -> list[StoreRef]:
    """Project store first, then the user store when one is configured."""
    project_dir = Path(project_dir)
    refs = [StoreRef("project", "project", project_db_path(project_dir),
                     name or project_dir.resolve().name or str(project_dir))]
    if user_db is not None:
        refs.append(StoreRef("user", "user", Path(user_db), "user store"))
    return refs


def scan_projects(root: Path, limit: int = 500) -> list[Path]:
    """Project folders below ``root`` that hold ``.agentao/memory.db``, sorted, at most ``limit``."""
    found = []
    for here, dirs, files in os.walk(root):
        if os.path.basename(here) == ".agentao":
            if "memory.db" in files:
                found.append(Path(here).parent)
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and (d == ".agentao" or not d.startswith(".")))
        if len(found) >= limit:
            break
    return sorted(found)
