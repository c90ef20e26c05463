"""Random memvault operations on one vault until the process is killed: the crash test's subject.

Run as `python -m tests.crash_worker VAULT SEED`. Every body it writes ends in an END line (or has
appended lines after it), so a truncated file would show.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.errors import MemvaultError
from memvault.service.vault import VaultService

CATEGORIES = [None, "a", "b/c"]


def step(vault: VaultService, rng: random.Random) -> None:
    rows, total = vault.list_memories(limit=200)
    op = rng.choice(["create", "create", "edit", "rename", "move", "link", "unlink", "delete"])
    if op == "create" or total < 3:
        body = "".join(f"payload line {i} {rng.random()}\n" for i in range(rng.randrange(1, 200)))
        vault.create(
            Draft(f"Note {rng.randrange(30)}", body + "END\n", ["crash"], rng.choice(CATEGORIES))
        )
    elif op == "edit":
        vault.update(
            rng.choice(rows).id, Revision(edit=BodyEdit(append=f"appended {rng.random()}"))
        )
    elif op == "rename":
        vault.update(rng.choice(rows).id, Revision(title=f"Note {rng.randrange(30)}"))
    elif op == "move":
        vault.update(rng.choice(rows).id, Revision(category=rng.choice(["a", "b/c", "d"])))
    elif op == "link":
        a, b = rng.sample(rows, 2)
        vault.link(a.id, b.id)
    elif op == "unlink":
        a, b = rng.sample(rows, 2)
        vault.unlink(a.id, b.id)
    else:
        vault.delete(rng.choice(rows).id)


def main() -> None:
    vault = VaultService.open(Settings(vault=Path(sys.argv[1])))
    rng = random.Random(int(sys.argv[2]))
    print("ready", flush=True)
    while True:
        try:
            step(vault, rng)
        except MemvaultError:
            continue


if __name__ == "__main__":
    main()
