"""What is built on the service.

- `briefing`: the session briefing within a token budget (`get_context`).
- `session_notes`: session notes, linked to what they name.
- `export_import`: export to JSON / JSON Lines, and import.
- `importers/`: import of other tools' data: Claude.ai and ChatGPT exports, MCP memory.
- `watch`: where an Obsidian edit is picked up: file-system events -> index refreshes.
- `review`: the web page's review queues, overview and link graph.
"""
