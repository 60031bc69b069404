"""Who `lexkb serve` lets in without a key, from which pages, and what it tells strangers: the
real CLI process over real HTTP on 127.0.0.1.

- Single-user mode (no key: the local user, admin) holds only for requests made on this
  machine: an --allow-host naming a public host (a reverse proxy's) turns keys on for every
  request, and a keyless request carrying a proxy's forwarding header is refused, since a
  proxy may forward `Host: 127.0.0.1:PORT`.
- A browser Origin is the service's own (its port) or one named by --allow-origin, never
  another local port's.
- /static/index.html is the page, with the page's headers (its CSP).
- /readyz and a snapshot diff's 404 name neither the store's file nor the index root.
- `serve keys add` refuses a store inside the index root, as `serve` does.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lexkb_service.serve.gate import policy_for
from tests.support.mcp_process import LEXKB, environment
from tests.support.serve_process import Served, add_key, call, start

ADMIN_ROUTES = ("/api/v1/admin/answers", "/api/v1/admin/feedback", "/metrics")
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture(scope="module")
def proxied_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-proxied") / "serve.db"


@pytest.fixture(scope="module")
def proxied_keys(proxied_store: Path) -> dict[str, str]:
    return {
        name: add_key(proxied_store, name, admin=name == "admin") for name in ("alice", "admin")
    }


@pytest.fixture(scope="module")
def proxied(
    built_root: Path, proxied_store: Path, proxied_keys: dict[str, str]
) -> Iterator[Served]:
    """On 127.0.0.1, reached through a proxy as lexkb.example; no --require-keys."""
    server = start(built_root, proxied_store, "--allow-host", "lexkb.example")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def local_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-local") / "serve.db"


@pytest.fixture(scope="module")
def local(built_root: Path, local_store: Path) -> Iterator[Served]:
    """Single-user mode on 127.0.0.1 (a loopback --allow-host keeps it), with one extra
    origin allowed: a local development page."""
    server = start(
        built_root, local_store,
        "--allow-host", "localhost", "--allow-origin", "http://localhost:5173",
    )  # fmt: skip
    yield server
    server.stop()


def test_a_public_allowed_host_turns_keys_on(proxied, proxied_keys):
    public = {"Host": "lexkb.example"}
    for route in ADMIN_ROUTES:
        assert call(proxied, "GET", route, **public).status == 401, route
        # The proxy may also forward the service's own Host: keys are on for every request.
        assert call(proxied, "GET", route).status == 401, route
    assert call(proxied, "GET", "/api/v1/me", **public).status == 401
    assert call(proxied, "POST", "/mcp", PING, **public).status == 401
    admin, alice = proxied_keys["admin"], proxied_keys["alice"]
    assert call(proxied, "GET", "/api/v1/admin/answers", key=admin, **public).status == 200
    assert call(proxied, "GET", "/api/v1/admin/answers", key=alice, **public).status == 403
    me = call(proxied, "GET", "/api/v1/me", key=alice, **public).body
    assert me["key_name"] == "alice" and me["admin"] is False
    # The page and health need no key, through the proxy too.
    assert call(proxied, "GET", "/", **public).status == 200
    assert call(proxied, "GET", "/healthz", **public).status == 200


@pytest.mark.parametrize(
    "header",
    [
        {"X-Forwarded-For": "203.0.113.7"},
        {"Forwarded": "for=203.0.113.7;proto=https"},
        {"X-Real-IP": "203.0.113.7"},
        {"X-Forwarded-Proto": "https"},
        {"Via": "1.1 proxy"},
    ],
    ids=lambda h: next(iter(h)),
)
def test_a_keyless_request_through_a_proxy_is_never_the_local_user(local, header):
    for route in ADMIN_ROUTES:
        refused = call(local, "GET", route, **header)
        assert refused.status == 401 and "proxy" in refused.error, route
    assert call(local, "POST", "/mcp", PING, **header).status == 401
    # The same request made on this machine is the local user, who is admin.
    assert call(local, "GET", "/api/v1/admin/answers").status == 200
    assert call(local, "GET", "/api/v1/me").body["key_name"] == "local"


def test_only_the_services_own_origin_and_those_allowed(local):
    own = [f"http://127.0.0.1:{local.port}", f"http://localhost:{local.port}",
           f"http://[::1]:{local.port}", "http://localhost:5173"]  # fmt: skip
    for origin in own:
        assert call(local, "GET", "/api/v1/me", Origin=origin).status == 200, origin
    others = [f"http://localhost:{local.port + 1}", "http://127.0.0.1:3000",
              "http://localhost:8080", "http://localhost", f"https://localhost:{local.port}"]  # fmt: skip
    for origin in others:
        refused = call(local, "GET", "/api/v1/me", Origin=origin)
        assert refused.status == 403, origin
        assert call(local, "POST", "/mcp", PING, Origin=origin).status == 403, origin


def test_the_page_has_the_same_headers_whichever_path_serves_it(local):
    page, file = call(local, "GET", "/"), call(local, "GET", "/static/index.html")
    assert page.status == file.status == 200 and page.body == file.body
    for header in ("content-security-policy", "x-content-type-options", "referrer-policy",
                   "x-frame-options"):  # fmt: skip
        assert file.headers.get(header) == page.headers[header], header
    assert "script-src 'self'" in file.headers["content-security-policy"]
    script = call(local, "GET", "/static/app.js")
    assert script.headers["content-security-policy"] == page.headers["content-security-policy"]


def test_readyz_tells_strangers_no_path(proxied, proxied_store):
    ready = call(proxied, "GET", "/readyz")
    assert ready.status == 200 and ready.body["status"] == "ready"
    assert ready.body["store"] == "sqlite"
    text = str(ready.body)
    assert str(proxied_store) not in text and str(proxied_store.parent) not in text


def test_a_missing_snapshot_names_no_index_root(proxied, proxied_keys, built_root):
    key = proxied_keys["alice"]
    for old, new in (("20000101", "CURRENT"), ("CURRENT", "ffff"), ("previous", "CURRENT")):
        missing = call(proxied, "GET", f"/api/v1/snapshots/diff?old={old}&new={new}", key=key)
        assert missing.status == 404 and missing.error, (old, new)
        assert str(built_root) not in missing.error and "/" not in missing.error, missing.error


@pytest.mark.parametrize("how", ["--index", "LEXKB_ROOT", "serve --index"])
def test_keys_add_refuses_a_store_inside_the_index_root(built_root, how):
    inside = built_root / "keys.db"
    command = [LEXKB, "serve", "keys", "add", "eve", "--store", str(inside)]
    env = environment()
    if how == "--index":
        command += ["--index", str(built_root)]
    elif how == "LEXKB_ROOT":
        env["LEXKB_ROOT"] = str(built_root)
    else:
        command[2:2] = ["--index", str(built_root)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2 and "inside the index root" in done.stderr, done.stderr
    assert not done.stdout.strip() and not inside.exists()


def test_single_user_mode_needs_loopback_and_no_public_host():
    assert not policy_for("127.0.0.1", 8000).require_keys
    for loopback in (["localhost"], ["127.0.0.1:8000"], ["[::1]"], ["localhost:*"]):
        assert not policy_for("127.0.0.1", 8000, loopback).require_keys, loopback
    behind = policy_for("127.0.0.1", 8000, ["localhost", "lexkb.example:443"])
    assert behind.require_keys and "lexkb.example:443" in behind.keys_reason
    assert "lexkb.example:443" in behind.hosts
    asked = policy_for("127.0.0.1", 8000, ["lexkb.example"], require_keys=True)
    assert asked.require_keys and not asked.keys_reason  # the operator asked: nothing to say
    assert policy_for("0.0.0.0", 8000, ["lexkb.example"], ["https://lexkb.example"]).require_keys
    origins = policy_for("127.0.0.1", 8000, allow_origins=["https://app.example"]).origins
    assert set(origins) == {"http://127.0.0.1:8000", "http://localhost:8000",
                            "http://[::1]:8000", "https://app.example"}  # fmt: skip
    assert "http://localhost" in policy_for("127.0.0.1", 80).origins
