"""The SQLite index that mirrors the vault (derived from the files, but for kept state).

- `database`: `Index`: the parts below on one pool of connections (`index.names.resolve(...)`).
- `connections`: the pool: a connection per thread, writes in turn, a read's time limit.
- `entries`: each file's entry: its rows written, replaced and dropped; what was recorded of it.
- `names`: memories by id, path, file name, title, alias or property; the links between them.
- `searching`: full-text search, its snippets and relevance, the notes a filter admits, listings.
- `usage_counts`: uses counted in memory by reads until a writer saves them; export, import.
- `appends`: the appends memvault acknowledged, for `check` to find one a stale save lost.
- `reports`: stats, what `check` finds, links between categories, what upkeep archives.
- `schema`: the tables; derived ones rebuilt on a version change, kept state migrated; an index
  memvault cannot write is never opened (one in the user's cache instead).
- `sync`: the disk/index diff, an incremental sync, a full rebuild with worker processes.
- `rows`: the rows of one note (pure; made in worker processes).
- `search_sql`: the SQL of searches and listings, as (sql, parameters) (pure).
- `link_resolution`: links resolved in SQL by Obsidian's rules (path, suffix, name, title, alias).
"""
