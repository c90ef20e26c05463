"""Every change to a memory's file, with its index rows, and links kept both ways.

- `writer`: `Writer`: save, move and remove a file with its index entry; a read-change-write
  tried again when the file changed under it; a change across files all or nothing.
- `links`: `LinkService`: link/unlink both ways; links follow a rename, go with a delete, move
  to the kept memory in a merge.
- `renamed_links`: how a link reads after a rename (pure).
- `supersedes`: `supersedes`/`superseded_by` property links set both ways.
"""
