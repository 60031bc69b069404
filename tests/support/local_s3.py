"""A local S3-compatible server (moto) on 127.0.0.1 for the object-store tests, with the
environment lexkb's object-store roots read (endpoint, test credentials, region, cache)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def local_s3(
    bucket: str, cache: Path, endpoint: Callable[[tuple[str, int]], str] | None = None
) -> Iterator[pytest.MonkeyPatch]:
    """A running server with `bucket` created, and the environment pointing at it until the
    block ends. `endpoint` maps the server's (host, port) to the URL clients use (a proxy in
    front of it, say); by default the server itself."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = endpoint((host, port)) if endpoint else f"http://{host}:{port}"
    patch = pytest.MonkeyPatch()
    try:
        patch.setenv("AWS_ENDPOINT_URL", url)
        patch.setenv("AWS_ACCESS_KEY_ID", "lexkb-test")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "lexkb-test")
        patch.setenv("AWS_REGION", "us-east-1")
        patch.setenv("LEXKB_CACHE", str(cache))
        boto3.client("s3", endpoint_url=url).create_bucket(Bucket=bucket)
        yield patch
    finally:
        patch.undo()
        server.stop()
