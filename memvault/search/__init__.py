"""Search as pure functions: what a query, its filters and its ranking become.

- `query`: a person's words -> FTS5 terms (phrases of words typed side by side only rank); CJK.
- `filters`: categories, tags, scopes and the archive as FTS5 terms of the `facets` column.
- `relevance`: a hit's relevance (0..1, comparable across queries and modes), and the order
  `prefer_recent` gives near-ties.
- `fusion`: one ranking from full-text and semantic results (distribution-based score fusion).
- `similarity`: how alike names and texts are (fuzzy recall, near-duplicates), a memory's key
  words.

Where results are ranked: `index/searching.py` runs the SQL (`index/search_sql.py`: bm25 of each
note's best section), `relevance` scores each hit, `service/vault.py` asks `fusion` to merge the
meaning side's ranking (`semantic/vectors.py`) with it.
"""
