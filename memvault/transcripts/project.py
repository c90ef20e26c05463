"""The project a session worked in, from its folder: the git repository holding it (its name
and checked-out branch, read from `.git` without running git) or else the folder itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Project:
    """A project's name (the scope its sessions go to), its root folder, and its branch when
    it is a git repository."""

    name: str
    root: str
    repository: bool = False
    branch: str | None = None


def project_of(cwd: str | Path) -> Project:
    """The git repository holding `cwd` (a worktree counts as its main repository), or `cwd`
    itself when none does."""
    folder = Path(cwd).expanduser()
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.exists():
            return Project(
                _repository_name(candidate, dot_git), str(candidate), True, _branch(dot_git)
            )
    return Project(folder.name or str(folder), str(folder))


def _repository_name(root: Path, dot_git: Path) -> str:
    """A worktree's `.git` file points into its main repository's `.git/worktrees/NAME`:
    the repository's name is the main one's folder."""
    if dot_git.is_file():
        target = _gitdir(dot_git)
        if target is not None and target.parent.name == "worktrees":
            return target.parent.parent.parent.name
    return root.name


def _gitdir(dot_git: Path) -> Path | None:
    """Where a `.git` file points (`gitdir: PATH`)."""
    try:
        text = dot_git.read_text(errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.split(":", 1)[1].strip())
    return target if target.is_absolute() else (dot_git.parent / target).resolve()


def _branch(dot_git: Path) -> str | None:
    """The checked-out branch named by HEAD (None when detached or unreadable)."""
    folder = _gitdir(dot_git) if dot_git.is_file() else dot_git
    try:
        head = (folder / "HEAD").read_text(errors="replace").strip() if folder else ""
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return head[len(prefix) :] if head.startswith(prefix) else None
