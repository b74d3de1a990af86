"""Which files the dashboard shows: the project store(s) and the optional user store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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


def project_db_path(project_dir: Path) -> Path:
    """Where agentao keeps a project's store (contract §1)."""
    return Path(project_dir) / ".agentao" / "memory.db"


def default_user_db() -> Path:
    """Where agentao keeps the user store (contract §1)."""
    return Path.home() / ".agentao" / "memory.db"


def build_refs(project_dir: Path, user_db: Path | None) -> list[StoreRef]:
    """Project store first, then the user store when one is configured."""
    project_dir = Path(project_dir)
    refs = [StoreRef("project", "project", project_db_path(project_dir),
                     project_dir.resolve().name or str(project_dir))]
    if user_db is not None:
        refs.append(StoreRef("user", "user", Path(user_db), "user store"))
    return refs
