"""MCP over stdio and streamable HTTP, and the local web page: the faces an assistant and a
person's browser use. `mcp_server.build_server` makes the server; `transport` runs it. Importing
this package imports nothing (the MCP SDK costs most of a second: only `serve` loads it)."""
