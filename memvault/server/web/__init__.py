"""The local web page and its JSON API.

- `app`: the page's files (`static/`: HTML, CSS, JavaScript, no build step) and its API, behind
  the guard.
- `api`: `/api/...`: parse, call VaultService, answer JSON. Where the page saves: `WebApi.save`.
- `guard`: Host/Origin checks, the page's key (never a cookie; never opens `/mcp`), same-origin
  writes with `X-Memvault`, a strict CSP.
- `secrets`: every text the page gets masked, names and values included; snippets masked
  before highlighting.
"""
