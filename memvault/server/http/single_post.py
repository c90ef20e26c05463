"""A stateless JSON POST holding one JSON-RPC request, answered in the request's own task.

The SDK's stateless streamable HTTP path makes, for every POST, a transport, four memory
streams, a dispatcher and a task group, and passes the request and its answer through them:
about 1 ms of CPU a call under the GIL, as much as a search's SQL. memvault serves stateless
with JSON answers, so a POST is one request and one answer. This answers such a POST with the
SDK's own single-exchange driver (`serve_one`, which the SDK's 2026 protocol path uses): the
same checks first (body size, Content-Type, Host, Origin, Accept), the same handler chain, the
same JSON-RPC answer and errors. Anything else (a notification, a batch, `initialize`, a body
that does not parse, GET, DELETE, the 2026 protocol) goes to the SDK's app unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

JSON = "application/json"


@dataclass
class OneExchange:
    """The dispatch context of one POST's request: it has no back channel (a JSON answer
    carries only the response, as in the SDK's JSON-response mode), so a server-initiated
    request fails and a notification is dropped."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        """Refused: a JSON answer has no room for a request to the client."""
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        """Dropped: a JSON answer carries only the response."""

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Dropped, as a notification is."""


class SinglePost:
    """Serves /mcp: a POST of one JSON-RPC request (not `initialize`) on the handshake-era
    protocol is answered here; every other message and request goes to `sdk_app`."""

    def __init__(self, sdk_app: ASGIApp, manager: StreamableHTTPSessionManager):
        self.sdk_app = sdk_app
        self.manager = manager
        self.security = TransportSecurityMiddleware(manager.security_settings)
        self.limited = RequestBodyLimitMiddleware(self._post, manager.max_request_body_size)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A handshake-era POST, within the SDK's body size limit, to `_post`; the rest on."""
        if scope["type"] == "http" and scope["method"] == "POST" and _handshake_era(scope):
            await self.limited(scope, receive, send)
        else:
            await self.sdk_app(scope, receive, send)

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the POST as the SDK's transport does, then answer its one request, or pass
        it on (its body replayed) when it is anything else."""
        request = Request(scope, receive)
        refusal = await self.security.validate_request(request, is_post=True)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        body = await request.body()
        message = _one_request(request, body)
        if message is None:
            await self.sdk_app(scope, _replayed(body, receive), send)
            return
        answer = await self._answer(request, message)
        response = Response(
            answer.model_dump_json(by_alias=True, exclude_unset=True),
            headers={"Content-Type": JSON},
        )
        await response(scope, receive, send)

    async def _answer(
        self, request: Request, message: JSONRPCRequest
    ) -> JSONRPCResponse | JSONRPCError:
        """The JSON-RPC answer to `message`, its errors mapped as the SDK's dispatcher maps
        them (an unexpected exception: code 0 with its text, the traceback logged)."""
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        exchange = OneExchange(
            transport=TransportContext(kind="streamable-http", can_send_request=False),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
        )
        try:
            result = await serve_one(
                self.manager.app,
                exchange,
                message.method,
                message.params,
                connection=Connection.from_envelope(version, None, None),
                lifespan_state=self.manager._lifespan_state,
            )
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                log.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)


def _handshake_era(scope: Scope) -> bool:
    """Whether the request speaks a protocol version with a handshake (or names none): the
    2026 protocol has its own single-exchange path in the SDK."""
    header = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")
    named = next((value for key, value in scope["headers"] if key == header), None)
    return named is None or named.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


def _one_request(request: Request, body: bytes) -> JSONRPCRequest | None:
    """The body's one JSON-RPC request when this path can answer it: JSON asked for and sent,
    one request that is not `initialize`; else None."""
    has_json, _ = check_accept_headers(request)
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    if not has_json or content_type != JSON:
        return None
    try:
        message = jsonrpc_message_adapter.validate_python(
            pydantic_core.from_json(body), by_name=False
        )
    except (ValueError, ValidationError):
        return None
    if not isinstance(message, JSONRPCRequest) or message.method == "initialize":
        return None
    return message


def _replayed(body: bytes, receive: Receive) -> Receive:
    """A receive that gives `body` first, then what `receive` gives."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
