"""The memory and its text, as plain data and pure functions (no I/O but the clock).

- `memory`: the `Memory` record and how a file becomes one; limits, slugs (capped in UTF-8
  bytes, device names avoided), the archive folder's name.
- `document`: frontmatter + body, parsed and rendered without losing a byte.
- `yaml_errors`: what is wrong with frontmatter YAML, in plain words at the file's line.
- `markdown`: bodies: links, tags, sections, the Related list, plain text.
- `body_edits`: an edit of a body as one value (`BodyEdit`), each step sized before it is built.
- `properties`: the frontmatter keys memvault does not own (Obsidian's properties): what a caller
  may set (nested objects and lists too), merges, the dotted paths and texts each value is
  indexed as, `supersedes`/`superseded_by` links.
- `property_lists`: an edit's items added to and taken out of a list property or the tags.
- `drafts`: what a caller asks a write for, handed over whole: `Draft` (a new memory),
  `Revision` (a change to one), `WriteOptions` (who writes, duplicates, secrets, guards).
- `records`: the records the service returns (search hits, pages, rows, links, briefings).
- `reports`: what upkeep and `check` report (summaries, the problems found, an import).
- `secrets`: secrets in text (kind and line), redaction, and the screen every write passes.
- `ages`: a memory's update time from its file's own record: the frontmatter's stamp, or the
  mtime of an edit that left it (told by content, not by mtime).
- `clock`, `timespec`, `expiry`: the time; `since`/`until` as people write them; expiry dates
  from `expires_at`/`ttl_days`.
"""
