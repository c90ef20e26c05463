"""The vault folder on disk.

- `files`: `VaultStore`: safe paths (never into a dot-folder), the walk (iterative; symlink
  loops, links to the vault's own notes, its own `README.md` skipped), stable reads, a note's
  head read within a byte limit, atomic writes that compare before they replace, the vault lock.
- `regular_files`: opening a file: `O_NONBLOCK`, then the descriptor itself checked (a regular
  file, resolved inside the vault): a named pipe never blocks, a swapped-in symlink is refused.
- `journal`: the rename journal: a change across files recorded before it starts, finished
  after a crash.
"""
