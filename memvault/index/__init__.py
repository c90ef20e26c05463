"""The SQLite index that mirrors the vault (derived from the files, but for kept state).

- `database`: `Index`: its reads and writes on a pool of connections, a read's time limit.
- `schema`: the tables; derived ones rebuilt on a version change, kept state migrated; an index
  memvault cannot write is never opened (one in the user's cache instead).
- `sync`: the disk/index diff, an incremental sync, a full rebuild with worker processes.
- `rows`: the rows of one note (pure; made in worker processes).
- `search_sql`: the SQL of searches and listings, as (sql, parameters) (pure).
- `link_resolution`: links resolved in SQL by Obsidian's rules (path, suffix, name, title, alias).
- `usage_counts`: uses counted in memory by reads until a writer saves them.
"""
