"""`memvault import` of other tools' data: each source's reader, and the import itself.

- `sources`: which tool a file comes from (`--format auto`), and the reader of each.
- `claude_ai`: a Claude.ai data export's `conversations.json`.
- `chatgpt`: a ChatGPT data export's `conversations.json` (the branch each one shows).
- `mcp_memory`: the MCP reference memory server's `memory.json` (entities, relations).
- `dialogue`: a conversation as a memory: who said what, when.
- `sizes`: a memory within 64 KB: its first and last parts, and what was left out.
- `records`: what a reader gives: entries, relations, the entries it passes over.
- `links`: relations gathered into one link both ways per pair, in words.
- `run`: the import through VaultService: idempotent, dated, redacted, resumable, dry run.
- `transcripts`: a folder of Claude Code or Codex session transcripts, as captured sessions.
"""

# The formats `memvault import --format` names (besides auto): memvault's own export, then the
# other tools'; here, so that the CLI lists them without loading the readers.
MEMVAULT = "memvault"
CLAUDE_AI = "claude-ai"
CHATGPT = "chatgpt"
MCP_MEMORY = "mcp-memory"
FORMATS = (MEMVAULT, CLAUDE_AI, CHATGPT, MCP_MEMORY)
# The formats of a folder of session transcripts (`memvault import FOLDER`).
TRANSCRIPT_FORMATS = ("claude-code", "codex")
