"""Client hooks: memvault in an assistant's session lifecycle without the model calling a
tool. `claude_settings` merges memvault's hooks into Claude Code's settings file and takes them
out again; `handling` is what each hook event does (a briefing at the start, a capture before
compaction and at the end); `capture_queue` hands captures to one detached worker per vault
(`worker`) so a hook returns at once; `run_log` keeps a line per run for `hooks status`."""
