"""Transcripts of an assistant's sessions, read without an LLM: what each client writes
(`claude_code`, `codex`, `generic`) as one stream of events (`events`), read line by line
whatever the size (`reading`), the facts a session leaves (`digest`) and the session memory's
text within a size cap (`rendering`)."""
