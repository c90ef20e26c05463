"""Streamable HTTP.

- `listening`: the socket, bound before the vault opens; `serve --processes`' copies.
- `connections`: time limits for headers and bodies (a deadline and a minimum rate), idle
  time, a cap, a short answer to `GET /mcp`.
- `single_post`: one JSON-RPC POST answered in its own task, after the same checks.
"""
