"""MCP over stdio, where a malformed line gets a JSON-RPC error instead of silence.

The SDK's stdio transport turns a line that is not a JSON-RPC message into an exception on its
read stream, and the serving loop drops it: the client waits for a reply that never comes. Here
a filter between the two answers it as JSON-RPC 2.0 says (id null, since none could be read):
-32700 Parse error for a line that is not JSON, -32600 Invalid Request for JSON that is not a
message, and the server goes on reading the next line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def error_reply(exc: Exception) -> SessionMessage:
    """The JSON-RPC error for a line the transport could not read as a message."""
    json_but_not_a_message = isinstance(exc, ValidationError) and all(
        e["type"] != "json_invalid" for e in exc.errors()
    )
    error = (
        types.ErrorData(
            code=types.INVALID_REQUEST,
            message="Invalid Request: the line is JSON but not a JSON-RPC 2.0 message",
        )
        if json_but_not_a_message
        else types.ErrorData(code=types.PARSE_ERROR, message="Parse error: the line is not JSON")
    )
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))


async def _answer_malformed(
    lines: ObjectReceiveStream[SessionMessage | Exception],
    to_server: ObjectSendStream[SessionMessage | Exception],
    replies: ObjectSendStream[SessionMessage],
) -> None:
    """Pass each message read on to the server; answer each unreadable line on the way out."""
    async with to_server:
        async for item in lines:
            if isinstance(item, Exception):
                await replies.send(error_reply(item))
            else:
                await to_server.send(item)


async def serve_stdio(server: MCPServer) -> None:
    """Serve `server` on this process's stdin and stdout until stdin closes."""
    from mcp.server.stdio import stdio_server

    # MCPServer runs stdio only through its own loop, with no seam between the transport and
    # the server; its low-level server takes the streams it is handed.
    lowlevel = server._lowlevel_server
    async with stdio_server() as (lines, replies):
        to_server, messages = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as group:
            group.start_soon(_answer_malformed, lines, to_server, replies)
            await lowlevel.run(messages, replies, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()
