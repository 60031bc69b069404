"""/api/v1/documents/{document}/pages/{page}: a page of a PDF source as a PNG, rendered from the
copy of the file the served snapshot keeps (lexkb.core.store.snapshot.source_name), so that a
reader sees the cited page as it was printed, offline, and nothing outside the index root is read.

pdfium is loaded on the first page asked for (no query command loads it) and renders one page
at a time (it is not thread-safe); the pages rendered last are kept in memory. A page of a file
never changes, so the reply may be cached, and an ETag answers a repeated request with 304.
"""

from __future__ import annotations

import struct
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Annotated

import anyio
import numpy as np
from fastapi import APIRouter, Request
from fastapi import Path as InPath
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from lexkb.core.store.snapshot import SOURCE_FORMATS
from lexkb.limits import DEFAULT_LIMITS
from lexkb_service.mcp.access import Access
from lexkb_service.serve.access_rules import requires
from lexkb_service.serve.api import service
from lexkb_service.serve.versions import V1

MAX_PAGE = 100_000  # bounds the page number before any file is opened
MAX_SIDE = 1600  # pixels on a page's longer side
MAX_SCALE = 2.0  # pixels per PDF point, for pages smaller than MAX_SIDE allows
RENDERED = 32  # pages kept in memory
CACHE = "private, max-age=86400"  # private: where keys are needed, a page is a key holder's
router = APIRouter(prefix=V1, dependencies=[requires(Access.KEY)])
# One page rendered at a time, in a thread of its own: pdfium is not thread-safe, and a render
# must not take a worker thread from searches.
_rendering = anyio.CapacityLimiter(1)


@router.get(
    "/documents/{document}/pages/{page}",
    operation_id="document_page",
    summary="a page of a PDF document as printed (PNG), from the served snapshot's copy",
    response_class=Response,
    responses={
        200: {
            "description": "the page as a PNG image",
            "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
        },
        304: {"description": "the page has not changed since the ETag sent"},
    },
)
async def source_page(
    document: Annotated[str, InPath(min_length=1, max_length=DEFAULT_LIMITS.max_reference_chars)],
    page: Annotated[int, InPath(ge=1, le=MAX_PAGE)],
    request: Request,
) -> Response:
    path, tag = await anyio.to_thread.run_sync(lambda: _source(request, document, page))
    headers = {"Cache-Control": CACHE, "ETag": tag}
    if request.headers.get("if-none-match") == tag:
        return Response(status_code=304, headers=headers)
    png = await anyio.to_thread.run_sync(_render, str(path), page, limiter=_rendering)
    return Response(png, media_type="image/png", headers=headers)


def _source(request: Request, document: str, page: int) -> tuple[Path, str]:
    """The kept copy of `document`'s PDF inside the served snapshot and the page's ETag; 404
    for a document that is not a PDF, a page past its last, or a snapshot with no copy."""
    index = service(request).index()
    try:
        info, _ = index.document_paragraphs(document)
    except (KeyError, ValueError) as exc:
        raise HTTPException(404, str(exc.args[0] if exc.args else exc)) from exc
    name = info["document_key"]
    if info["format"] not in SOURCE_FORMATS:
        raise HTTPException(404, f"{name} is not a PDF: it has no printed pages to show")
    if info["page_count"] and page > info["page_count"]:
        raise HTTPException(404, f"{name} has {info['page_count']} pages, not {page}")
    kept = index.snapshot.source_path(info["source_sha256"], info["format"])
    inside = index.snapshot.path.resolve()
    if kept is None or kept.is_symlink() or kept.resolve().parent != inside:
        raise HTTPException(
            404, f"the served snapshot keeps no copy of {name}'s PDF (rebuild the index)"
        )
    return kept, f'"{info["source_sha256"][:32]}-{page}-{MAX_SIDE}"'


@lru_cache(maxsize=RENDERED)
def _render(path: str, page: int) -> bytes:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        if page > len(pdf):
            raise HTTPException(404, f"the PDF has {len(pdf)} pages, not {page}")
        sheet = pdf[page - 1]
        width, height = sheet.get_size()
        scale = min(MAX_SCALE, MAX_SIDE / max(width, height, 1.0))
        bitmap = sheet.render(scale=scale, rev_byteorder=True)
        pixels = bitmap.to_numpy()[:, :, :3]
    finally:
        pdf.close()
    return png(np.ascontiguousarray(pixels))


def png(rgb: np.ndarray) -> bytes:
    """An 8-bit RGB image (height x width x 3) as PNG bytes, each row unfiltered."""
    height, width, _ = rgb.shape
    rows = np.hstack([np.zeros((height, 1), np.uint8), rgb.reshape(height, width * 3)])

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", header),
            chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)),
            chunk(b"IEND", b""),
        ]
    )
