"""The service's commands: `lexkb serve` (run the service, and manage its API keys) and
`lexkb mcp` (the MCP server alone, over stdio or HTTP).

    lexkb serve --index ROOT [--host 127.0.0.1 --port 8000] [--store FILE|postgresql://...]
    lexkb serve keys add NAME [--admin] | keys list | keys revoke NAME   [--store ...]
    lexkb mcp --index ROOT [--http HOST:PORT]

The library's CLI lists both and, when one runs, loads its `configure_*` function here through
the entry point group `lexkb.service` (lexkb/cli/service.py), which fills in the parser it made.

A new key is printed once and stored only as its hash. The store's location comes from
--store, else $LEXKB_SERVE_STORE, else serve.db beside the index root (var/serve.db for
var/index; never the working directory's); a PostgreSQL URL belongs in the environment rather
than on the command line when it carries a password (`ps` shows arguments).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from lexkb.core import environment
from lexkb.core.text.terminal import safe
from lexkb_service.mcp.admission import PER_KEY_UNITS
from lexkb_service.mcp.ratelimit import ASKS_PER_HOUR
from lexkb_service.serve.sessions import SESSIONS_PER_KEY
from lexkb_service.serve.store import CONVERSATIONS_PER_KEY

DEFAULT_PORT = 8000


def _store_option(p: argparse.ArgumentParser, outer: bool = False) -> None:
    """--store; its default (None: the environment's, else beside the index root, chosen by
    `store_of`) given by the `outer` parser alone (an inner parser's default would replace a
    value given before its command: `serve --store X keys list`)."""
    p.add_argument(
        "--store",
        default=None if outer else argparse.SUPPRESS,
        help="conversations, feedback and keys: a SQLite file (created 0600, outside the index "
        f"root) or a postgresql:// URL; default ${environment.SERVE_STORE}, else serve.db "
        "beside the index root",
    )


def store_of(args: argparse.Namespace) -> str:
    """The store named by --store, else $LEXKB_SERVE_STORE, else serve.db beside --index."""
    from lexkb_service.serve.database import store_beside

    return args.store or environment.serve_store() or str(store_beside(args.index))


def configure_serve(
    serve: argparse.ArgumentParser, with_index: Callable[[argparse.ArgumentParser], None]
) -> None:
    """`lexkb serve`'s options and its `keys` commands (its --index is its own: it follows
    CURRENT and prints no JSON)."""
    serve.add_argument("--host", default="127.0.0.1", help="address to bind")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to bind")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        help="a Host value clients send (behind a proxy: its public name; any name other "
        "than a loopback one turns keys on)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        help="a browser origin other than the service's own (scheme://host[:port])",
    )
    serve.add_argument(
        "--require-keys",
        action="store_true",
        help="on loopback too, every API request needs a key (off loopback, or with a "
        "non-loopback --allow-host, it always does)",
    )
    serve.add_argument("--asks-per-hour", type=int, default=ASKS_PER_HOUR, help="per key")
    serve.add_argument(
        "--cost-per-key",
        type=int,
        default=None,
        help="cost units of costly work (asks, reranked searches, verification: about five "
        "pair-model reads a unit) one key may have in progress; past it, 429 (default "
        f"${environment.SERVE_COST_PER_KEY}, else {PER_KEY_UNITS})",
    )
    serve.add_argument(
        "--sessions-per-key",
        type=int,
        default=SESSIONS_PER_KEY,
        help="MCP sessions one key may hold open (default %(default)s)",
    )
    serve.add_argument(
        "--conversations-per-key",
        type=int,
        default=CONVERSATIONS_PER_KEY,
        help="conversations one key may keep (default %(default)s)",
    )
    _store_option(serve, outer=True)
    serve.add_argument(
        "--index",
        default=environment.index_root() or "var/index",
        help="index root (follows CURRENT); default $LEXKB_ROOT, else %(default)s",
    )
    serve.set_defaults(func=cmd_serve)
    sub = serve.add_subparsers(dest="serve_command", metavar="keys")
    keys = sub.add_parser("keys", help="add, list or revoke API keys")
    _store_option(keys)
    actions = keys.add_subparsers(dest="keys_action", required=True, metavar="{add,list,revoke}")
    add = actions.add_parser("add", help="a new key, printed once")
    add.add_argument("name")
    add.add_argument("--admin", action="store_true", help="may read everyone's feedback, traces")
    listed = actions.add_parser("list", help="the keys, without their secrets")
    revoke = actions.add_parser("revoke", help="a key stops working at once")
    revoke.add_argument("name")
    for p in (add, listed, revoke):
        _store_option(p)
        # The index the store must lie outside of, as `serve` checks (also taken before
        # `keys`: lexkb serve --index ROOT keys add NAME).
        p.add_argument("--index", default=argparse.SUPPRESS, help="index root (refused around)")
        p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(func=cmd_keys)
    # argparse shows a subcommand as required whether it is or not: `serve` runs without one.
    usage = serve.format_usage().removeprefix("usage: ").rstrip()
    serve.usage = usage.replace(" keys ...", " [keys ...]")


def configure_mcp(
    mcp: argparse.ArgumentParser, with_index: Callable[[argparse.ArgumentParser], None]
) -> None:
    """`lexkb mcp`'s options, --index as the query commands take it."""
    mcp.add_argument("--http", metavar="HOST:PORT", help="serve HTTP at http://HOST:PORT/mcp")
    mcp.add_argument(
        "--allow-host",
        action="append",
        metavar="HOST[:PORT]",
        help="a Host header clients send (repeatable; needed off loopback, with LEXKB_MCP_TOKEN)",
    )
    mcp.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="a browser origin allowed, such as https://app.example.com (repeatable)",
    )
    mcp.add_argument(
        "--asks-per-hour",
        type=int,
        default=None,
        help="with --http: asks per caller (the token, else each client address) an hour; "
        f"default {ASKS_PER_HOUR}, as lexkb serve's per key",
    )
    with_index(mcp)
    mcp.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from lexkb_service.mcp.server import serve

    serve(args.index, args.http, args.allow_host or (), args.allow_origin or (), args.asks_per_hour)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from lexkb_service.serve.app import Quotas, listening, serve
    from lexkb_service.serve.gate import policy_for
    from lexkb_service.serve.store import Store

    if not 0 < args.port < 65536:
        raise ValueError(f"--port takes 1 to 65535, not {args.port}")
    for option in ("asks_per_hour", "cost_per_key", "sessions_per_key", "conversations_per_key"):
        value = getattr(args, option)
        if value is not None and value < 1:
            flag = "--" + option.replace("_", "-")
            raise ValueError(f"{flag} takes a whole number of at least 1")
    quotas = Quotas(
        args.asks_per_hour, args.cost_per_key, args.sessions_per_key, args.conversations_per_key
    )
    policy = policy_for(args.host, args.port, args.allow_host, args.allow_origin, args.require_keys)
    # The port first: one in use is said before any store is made or moved forward. It is let
    # go again just before `serve` takes it for good.
    with listening(args.host, args.port):
        store = Store(store_of(args), index_root=args.index)
    if policy.keys_reason:
        print(f"lexkb serve: {policy.keys_reason}", file=sys.stderr)
    if policy.require_keys and not any(k.revoked_at is None for k in store.api_keys()):
        print(
            "lexkb serve: no API key yet; add one with `lexkb serve keys add NAME`",
            file=sys.stderr,
        )
    serve(args.index, args.host, args.port, store, policy, quotas)
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from lexkb_service.serve.store import Store

    # Refused inside the index root, as `serve` refuses it: a key store written there would
    # go into the index (and `serve` would then not open it). Only `add` makes a store: a
    # path mistyped for `list` or `revoke` is said to hold none, and is left as it was.
    store = Store(store_of(args), index_root=args.index, create=args.keys_action == "add")
    if args.keys_action == "add":
        key, secret = store.add_key(args.name, admin=args.admin)
        if args.json:
            print(json.dumps({"name": key.name, "admin": key.admin, "key": secret}))
        else:
            print(secret)
            print(
                f"key {safe(key.name)!r} added{' (admin)' if key.admin else ''}: shown once, "
                "stored only as its hash",
                file=sys.stderr,
            )
        return 0
    if args.keys_action == "revoke":
        key = store.revoke_key(args.name)
        print(json.dumps({"revoked": key.name}) if args.json else f"revoked {safe(key.name)!r}")
        return 0
    keys = store.api_keys()
    if args.json:
        print(json.dumps([vars(k) for k in keys]))
        return 0
    for k in keys:
        state = "revoked" if k.revoked_at else "live"
        print(f"{safe(k.name)}\t{'admin' if k.admin else 'user'}\t{state}")
    return 0
