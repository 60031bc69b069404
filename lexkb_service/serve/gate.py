"""`lexkb serve`'s gate: the one Gate of lexkb's HTTP servers (lexkb_service.mcp.access: Host,
Origin, body size, the caller, and the access its route declares, before any route runs), with
the callers of this service: API keys looked up in the store, and the keyless local user, who is
admin, in single-user mode.

- Host: on a loopback address, loopback names and those named by --allow-host; on any other
  address, only those, and the service refuses to start without them (`policy_for`).
- Origin: the service's own (http://NAME:PORT for each name it answers on its loopback port)
  and those named by --allow-origin, never another port's: a page served by some other local
  program is another site. Off loopback, only those named, which are then required.
- Keys: `Authorization: Bearer lk_...`, looked up by hash in the store, in a worker thread (a
  database slow to answer must not hold the event loop); a store that cannot be reached is 503
  with Retry-After. Single-user mode, where a request without a key is the local user, needs
  all of: a loopback address, no --require-keys, and no --allow-host naming a host other than a
  loopback one (naming one means clients reach the service through a proxy, under a public
  name; then every request needs a key, whatever the address).
- Access: what each route needs is declared where it is written
  (lexkb_service.serve.access_rules), and read by the gate from the app's routes; a path no
  route matches needs a key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from lexkb_service.mcp.access import (
    Caller,
    Gate,
    Policy,
    Refusal,
    host_name,
    is_loopback,
    loopback_hosts,
    named,
    own_origins,
)
from lexkb_service.serve.store import LOCAL_OWNER, Store, StoreUnavailable

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Scope

    from lexkb_service.mcp.access import Identify, Routes
    from lexkb_service.serve.metrics import Metrics

# Seconds a client is asked to wait (Retry-After) when the store cannot be reached.
RETRY_AFTER = 2
# The keyless caller of single-user mode: the local user, who is admin.
LOCAL = Caller(LOCAL_OWNER, LOCAL_OWNER, admin=True)


def policy_for(
    host: str,
    port: int,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    require_keys: bool = False,
) -> Policy:
    """The policy for a service bound to `host`:`port`; ValueError, saying what is missing,
    off loopback without allowed hosts and origins."""
    hosts, origins = named(allow_hosts, allow_origins)
    if is_loopback(host):
        allowed_hosts = loopback_hosts(host, hosts)
        allowed_origins = tuple(dict.fromkeys([*own_origins(host, port), *origins]))
        public = [value for value in allow_hosts if not is_loopback(host_name(value))]
        reason = ""
        if public and not require_keys:
            reason = (
                f"--allow-host {public[0]} is not a loopback name (clients come through a "
                "proxy), so every request needs an API key"
            )
        return Policy(allowed_hosts, allowed_origins, require_keys or bool(public), reason)
    missing = [n for n, v in (("--allow-host", hosts), ("--allow-origin", origins)) if not v]
    if missing:
        raise ValueError(
            f"{host} is not a loopback address, so lexkb serve answers only the Host values "
            "named by --allow-host and the browser origins named by --allow-origin, and every "
            f"request needs an API key (lexkb serve keys add NAME); missing: {', '.join(missing)}"
        )
    return Policy(tuple(hosts), tuple(origins), True)


def keys_of(store: Store) -> Identify:
    """The caller an API key names: its live key in `store` (looked up in a worker thread),
    None when there is none; 503 while the store cannot be reached."""

    async def identify(secret: str) -> Caller | None:
        try:
            key = await anyio.to_thread.run_sync(store.key_for, secret)
        except StoreUnavailable as exc:
            raise Refusal(503, str(exc), {"Retry-After": str(RETRY_AFTER)}) from exc
        return None if key is None else Caller(key.id, key.name, key.admin)

    return identify


def local_user(scope: Scope) -> Caller:
    return LOCAL


def gate(
    app: ASGIApp,
    policy: Policy,
    store: Store,
    metrics: Metrics,
    max_body_bytes: int,
    routes: Routes,
) -> Gate:
    """The Gate in front of the whole service: `routes` say what each path needs and which
    label its metrics are counted under (a refused request too: its status says it was)."""
    return Gate(
        app, policy, routes, max_body_bytes, keys_of(store), local_user, observe=metrics.request
    )
