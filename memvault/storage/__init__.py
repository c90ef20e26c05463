"""The vault folder on disk.

- `files`: `VaultStore`: safe paths (never into a dot-folder), the walk (iterative; symlink
  loops, links to the vault's own notes, memvault's own `README.md` skipped), a note's head
  read within a byte limit, the vault lock; the reads and writes the rest of memvault asks for.
- `stable_reads`: reads an edit can start from: read again until stable while another program
  writes the file (Linux leases tell), UTF-8 or a clear error.
- `atomic_writes`: a temp file fsynced and renamed over, only if the file is still the one the
  edit read (compare before replace); the old file kept aside until the change is final
  (`Undo`); folders fsynced once a change ends; a full disk said plainly.
- `regular_files`: opening a file: `O_NONBLOCK`, then the descriptor itself checked (a regular
  file, resolved inside the vault): a named pipe never blocks, a swapped-in symlink is refused.
- `journal`: the rename journal: a change across files recorded before it starts, finished
  after a crash.
"""
