"""`VaultService`, the one entry point to a vault for the faces and the features, and the
parts it is made of.

- `vault`: `VaultService`, the facade: it opens and reads the vault itself; the writes,
  search and upkeep are its parts', handed to the faces as its own methods.
- `upkeep`: fill, sync, refresh, rebuild, maintain (renames finished, archiving), check.
- `parts`: what the parts share of one vault: store, index, semantic, writer, links, lock.
- `memory_writes`: create, write, update, restore, verify, archive, delete, link, merge.
- `edits`: what a write puts in a file: a new memory's fields, an edit's fields and body.
- `new_paths`: where a memory's file goes: a new one's free path, a moved one's.
- `write_lock`: the vault lock a change holds, all or nothing, renames finished first.
- `duplicate_guard`: where a write checks duplicates: same title, near-identical content, and
  (with `related`) a reworded twin, by meaning.
- `hybrid_search`: search by words, by meaning or both fused, `similar`, semantic status.
- `lookup`: a memory by the name a caller gives: exact, or a clear fuzzy match for reads.
- `related`: memories related to one (`similar_mem`), a new memory's reworded twin.
- `checks`: what `check` reports (lost appends among it), and `check --fix`'s repairs.
- `near_duplicates`: near-duplicate pairs for the review page and `check`.
"""
