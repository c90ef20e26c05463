"""`VaultService`, the one entry point to a vault for the faces and the features, and the
parts it is made of.

- `vault`: `VaultService`: create, read, update, delete, link, merge, list, sync, upkeep,
  check; search is its `hybrid_search` part's.
- `duplicate_guard`: where a write checks duplicates: same title, near-identical content, and
  (with `related`) a reworded twin, by meaning.
- `hybrid_search`: search by words, by meaning or both fused, `similar`, semantic status.
- `lookup`: a memory by the name a caller gives: exact, or a clear fuzzy match for reads.
- `related`: memories related to one (`similar_mem`), a new memory's reworded twin.
- `checks`: what `check` reports (lost appends among it), and `check --fix`'s repairs.
- `near_duplicates`: near-duplicate pairs for the review page and `check`.
"""
