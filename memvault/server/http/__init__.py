"""Streamable HTTP.

- `listening`: the socket, bound before the vault opens; `serve --processes`' copies.
- `connections`: the limits (headers, bodies: a deadline and a minimum rate, idle time, a cap),
  the answers a connection gets without the app, a short answer to `GET /mcp`.
- `protocol`: uvicorn's h11 protocol keeping those limits on each connection.
- `single_post`: one JSON-RPC POST answered in its own task, after the same checks.
"""
