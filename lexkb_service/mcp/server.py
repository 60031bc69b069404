"""lexkb over MCP: the query module's tools for AI assistants, on stdio or streamable HTTP.

    lexkb mcp --index ROOT [--http 127.0.0.1:8765 [--allow-host H] [--allow-origin O]]

A thin adapter: each tool of lexkb_service.mcp.tools.TOOLS validates its arguments against a
typed schema (sizes bounded, as lexkb.limits bounds the Python API), calls the query module on
the snapshot CURRENT names (lexkb.current follows it as new snapshots are published), and
returns the result's `to_dict()` as structured content. A refused argument comes back as a tool
error that says what is wrong; the server stays up for the next call.

Each call runs in a worker thread, finding the current snapshot included (for an `s3://` root
that is a request to the object store), so the event loop that serves every client never waits
on a disk or a network; tools that wait on another host run in a pool of their own
(lexkb_service.mcp.pools). The transports: lexkb_service.mcp.stdio (which answers a malformed
line with a JSON-RPC error) and lexkb_service.mcp.http (who may connect:
lexkb_service.mcp.access).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import anyio

from lexkb import limits as check
from lexkb.core.store.snapshot import SnapshotError
from lexkb.current import CurrentIndex
from lexkb_service.mcp.admission import Busy, KeyBudget
from lexkb_service.mcp.pools import Pools
from lexkb_service.mcp.ratelimit import ASKS_PER_HOUR, OverLimit, RateLimit
from lexkb_service.mcp.tools import BY_NAME, TOOLS, Tool

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

INSTRUCTIONS = """\
lexkb answers questions from a versioned snapshot of legal, regulatory and standards documents,
with citations. `ask` runs the whole loop and returns a verified, cited answer with its mode
(DIRECT, QUALIFIED, ABSTAIN). To build an answer yourself, work in this order: `search` (hybrid by default; each hit has a citation, a
calibrated relevance 0-1 and a chunk id) -> `hop` from the best hits along citations ->
`get` a reference the text mentions -> `format_context` the chosen chunk ids -> write the
answer citing refs -> check it with `verify_citations`, `verify_entities`, `verify_relations`
and `check_contradictions`. Every lookup says how it matched (exact, contains, ambiguous,
enclosing, not_found): cite only exact and contains matches."""


def cited_answer(question: str) -> str:
    """The loop for a cited answer from this index."""
    return (
        f"Answer from the lexkb index only, with citations.\n\nQuestion: {question}\n\n"
        "1. search the question (filters if the question names a document or date).\n"
        "2. hop from the two or three best hits to what they cite.\n"
        "3. format_context with the chunk ids you will rely on (primary: the hits that "
        "answer; supporting: what they cite).\n"
        "4. Write the answer from that context alone; cite each claim with its ref.\n"
        "5. verify_citations with each claim and its ref, verify_entities with the "
        "numbers, dates and names you wrote, check_contradictions on the chunks used.\n"
        "6. Fix or drop what failed; if nothing relevant was found, say so instead."
    )


# A tool that a service hosting this server runs itself (lexkb serve runs `ask` so that it
# counts against the caller's hourly allowance and is recorded, as /api/v1/ask is): called in the
# tool's worker thread with the HTTP request's `state` (who is calling, as the service's gate
# set it; empty over stdio) and the validated arguments, in place of the table's function.
Hosted = Callable[[Mapping[str, Any], dict[str, Any]], Any]


class Refused(Exception):
    """A call a hosting service declines (over its limit, say): the client gets the message
    as a tool error, and the server goes on."""


def handler(
    tool: Tool,
    current: CurrentIndex,
    pools: Pools,
    hosted: Hosted | None = None,
    budget: KeyBudget | None = None,
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """`tool` as the SDK registers it: an async function of the tool's arguments alone (its
    signature is the tool function's without `index`, so the schema is read from it) that
    runs one call on the current snapshot in a worker thread of the tool's pool, or through
    `hosted` when the hosting service runs the tool itself (then the SDK also hands it the
    request's context, `ctx`, which the published schema leaves out). A call with a cost
    (Tool.cost) runs in the costly pool and, with a `budget` (lexkb serve: a key per request),
    counts against its caller's key, or is refused when the key has too much in progress."""
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError

    def run(arguments: dict[str, Any], state: Mapping[str, Any]) -> Any:
        if hosted is not None:
            return hosted(state, arguments)
        return tool.function(current.get(), **arguments)

    async def call(ctx: Context | None = None, **arguments: Any) -> dict[str, Any]:
        state = _request_state(ctx)
        cost = tool.cost_of(arguments)
        limiter = pools.for_tool(tool.outbound, cost)
        owner = state.get("owner")
        held = budget.holding(owner, cost) if budget and owner else nullcontext()
        try:
            with held:
                result = await anyio.to_thread.run_sync(run, arguments, state, limiter=limiter)
        except (
            check.QueryError,
            ValueError,
            KeyError,
            SnapshotError,
            Refused,
            Busy,
            OverLimit,
        ) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise ToolError(str(message)) from exc
        payload: dict[str, Any] = result.to_dict() if hasattr(result, "to_dict") else result
        if current.last_error:
            payload = {**payload, "server_warning": current.last_error}
        return payload

    signature = inspect.signature(tool.function, eval_str=True)
    arguments = list(signature.parameters.values())[1:]
    if hosted is not None or budget is not None:
        # Found by its annotation (the SDK reads __annotations__ for it), injected per call.
        context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
        arguments.append(context)
        call.__annotations__ = {"ctx": Context, "return": dict[str, Any]}
    else:
        call.__annotations__ = {"return": dict[str, Any]}
    call.__name__ = call.__qualname__ = tool.name
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=arguments, return_annotation=dict[str, Any]
    )
    return call


def _request_state(ctx: Any) -> Mapping[str, Any]:
    """The HTTP request's ASGI `state` (what the service's gate wrote: who is calling), or
    nothing when the call did not come over HTTP or no context was given."""
    if ctx is None:
        return {}
    try:
        request = ctx.request_context.request
    except ValueError:  # no request in progress
        return {}
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, Mapping) else None
    return state if isinstance(state, Mapping) else {}


def build_server(
    root: str,
    limits: check.QueryLimits = check.DEFAULT_LIMITS,
    pools: Pools | None = None,
    current: CurrentIndex | None = None,
    hosted: Mapping[str, Hosted] | None = None,
    budget: KeyBudget | None = None,
    asks: RateLimit | None = None,
) -> MCPServer:
    """The MCP server for the index at `root` (opened now, so a bad root fails at start), or
    on `current` when a service that serves more than MCP already follows it; the tools named
    in `hosted` run through the service's own function (see Hosted), costly calls count
    against the caller's key in `budget` (lexkb_service.mcp.admission) when the service names
    one, and `ask` within each caller's hourly allowance in `asks` when one is given (and the
    service does not run `ask` itself: lexkb serve counts it with the API's asks)."""
    from mcp.server.mcpserver import MCPServer

    from lexkb import __version__

    pools = pools or Pools.sized()
    current = current or CurrentIndex(root, limits)
    server = MCPServer("lexkb", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    hosted = {**({"ask": allowed(asks, current)} if asks is not None else {}), **(hosted or {})}
    unknown = set(hosted) - {tool.name for tool in TOOLS}
    if unknown:
        raise ValueError(f"no such tools to host: {sorted(unknown)}")
    for tool in TOOLS:
        server.add_tool(
            handler(tool, current, pools, hosted.get(tool.name), budget),
            name=tool.name,
            description=tool.description,
            structured_output=True,
        )
    server.prompt()(cited_answer)
    return server


def allowed(asks: RateLimit, current: CurrentIndex) -> Hosted:
    """MCP's `ask` within an hourly allowance per caller (the `owner` the HTTP Gate found: the
    token's holder, or the client's address without a token), as lexkb serve allows each key:
    past it, OverLimit, a tool error that says when to retry. Counted only when answered (an
    ask refused for a bad filter, or one that failed, is given back)."""
    ask = BY_NAME["ask"].function

    def hosted(state: Mapping[str, Any], arguments: dict[str, Any]) -> Any:
        who = state.get("owner")
        if not who:  # the Gate names a caller for every request to the MCP path
            raise Refused("this request names no caller")
        with asks.spending(who) as wait:
            if wait:
                raise OverLimit(asks.per_window, wait)
            return ask(current.get(), **arguments)

    return hosted


def serve(
    root: str,
    http: str | None = None,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    asks_per_hour: int | None = None,
) -> None:
    """Run until stopped: stdio, or streamable HTTP at `http` ("HOST:PORT", path /mcp). Off
    loopback, HTTP needs the Host and Origin values clients will send and a bearer token in
    LEXKB_MCP_TOKEN (lexkb_service.mcp.access); over HTTP each caller may ask `asks_per_hour`
    questions an hour (None: lexkb serve's default). All is checked before the index is
    opened."""
    from lexkb_service.mcp.stdio import serve_stdio

    if http is None:
        given = [name for name, value in (("--allow-host", allow_hosts),
                 ("--allow-origin", allow_origins)) if value]  # fmt: skip
        given += ["--asks-per-hour"] if asks_per_hour is not None else []
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise ValueError(f"{', '.join(given)} {verb} to --http only")
        anyio.run(serve_stdio, build_server(root))
        return
    from lexkb_service.mcp.access import access_for
    from lexkb_service.mcp.http import HttpSettings, address, serve_http

    if asks_per_hour is not None and asks_per_hour < 1:
        raise ValueError("--asks-per-hour takes a whole number of at least 1")
    host, port = address(http)
    policy = access_for(host, allow_hosts, allow_origins)
    settings = HttpSettings.from_env()
    asks = RateLimit(asks_per_hour or ASKS_PER_HOUR)
    serve_http(build_server(root, asks=asks), host, port, policy, settings)
