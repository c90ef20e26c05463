"""Who is writing: the name a tool call's writes record as created_by / updated_by.

The server's `--agent NAME` (env MEMVAULT_AGENT) names every writer of a server set up for one
assistant; else an HTTP request's `X-Memvault-Agent` header does (a shared server, or a proxy in
front of one, telling its users apart); else the client's own name from its initialize request
(`clientInfo.name`, e.g. "claude-code"). A label, not an identity: clients choose it freely.
The web page's writes are a person's, not the assistant's: they record `web`, or the request's
`X-Memvault-Agent` header (a proxy naming the person signed in).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context

from memvault.core.properties import clean_agent

AGENT_HEADER = "x-memvault-agent"
WEB_AGENT = "web"


def agent_of(ctx: Context[Any, Any], fixed: str | None) -> str | None:
    """The writer of this tool call: `fixed` (--agent), the request's agent header, or the
    client's name; None when none is known."""
    if fixed:
        return clean_agent(fixed)
    headers = ctx.headers
    named = clean_agent(headers.get(AGENT_HEADER)) if headers else None
    if named:
        return named
    params = ctx.session.client_params
    return clean_agent(params.client_info.name) if params is not None else None


def page_person(headers: Mapping[str, str]) -> str:
    """Who a web page request's writes record: the agent header a proxy sets, else `web`."""
    return clean_agent(headers.get(AGENT_HEADER)) or WEB_AGENT
