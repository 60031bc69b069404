"""A hostile source folder: broken and odd files beside good documents holding known sentences.

Shared by the fault tests and `benchmarks/faults.py`. Every file is made here from nothing; each
bad file's `EXPECTED` entry says which fault kind its quarantine reason must name (None: the file
must be indexed, not quarantined).
"""

from __future__ import annotations

import io
import os
import random
import zipfile
from pathlib import Path

GOOD_SENTENCES = {
    "good-rulebook.txt": "The firm must reconcile client money balances every business day.",
    "good-guidance.md": "A records officer shall approve every destruction of archived files.",
    "good-standard.pdf": "The auditor shall document the sampling method before fieldwork begins.",
}
# Sentences inside odd but readable files: they must be found too.
ODD_SENTENCES = {
    "cp1252.txt": "The café owner’s licence expires after thirty days.",
    "nested.html": "The deeply nested notice requires quarterly disclosure of fees.",
    "long-line.txt": "The custodian shall segregate nominee accounts from proprietary accounts.",
}
# file name -> the quarantine kind its reason must name; None: indexed.
EXPECTED: dict[str, str | None] = {
    "empty.pdf": "empty",
    "empty.txt": "empty",
    "empty.json": "empty",
    "truncated.pdf": "truncated",
    "random.pdf": "not_pdf",
    "random.docx": "not_docx",
    "random.json": "invalid_json",
    "html-named.pdf": "not_pdf",
    "zip-named.pdf": "not_pdf",
    "encrypted.pdf": "encrypted",
    "scanned.pdf": "no_text_layer",
    "text-named.docx": "not_docx",
    "bomb.docx": "zip_bomb",
    "nested.json": "too_deep",
    "no-text.json": "invalid_json",
    "copy-of-good-rulebook.txt": None,
    "copy-of-html-named.pdf": "not_pdf",
    "cp1252.txt": None,
    "nested.html": None,
    "long-line.txt": None,
    "link-loop.txt": "symlink_loop",
    "environ.txt": "symlink_outside",
}


def pdf_bytes(lines: list[str], image_only: bool = False) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    if image_only:
        pdf.rect(20, 20, 100, 60, style="F")
    for line in lines:
        pdf.multi_cell(0, 6, line)
        pdf.ln(2)
    return bytes(pdf.output())


def encrypted_pdf(lines: list[str]) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(lines))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def bomb_docx(unzipped_mb: int) -> bytes:
    """A ZIP named .docx whose document.xml unzips to `unzipped_mb` MB of nothing."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w") as entry:
            block = b"<w:t>" + b" " * (1 << 20) + b"</w:t>"
            for _ in range(unzipped_mb):
                entry.write(block)
    return out.getvalue()


def make(
    folder: Path, outside: Path, long_line_mb: float = 2.0, seed: int = 7, variant: str = ""
) -> Path:
    """Write the hostile corpus into `folder`; `outside` receives a file the folder links to.
    `variant` makes the good documents of one copy differ from another's (so several copies
    are several documents, not duplicates)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    filler = [
        "This section applies to every authorised firm in the jurisdiction.",
        "Records must be kept in a durable medium and be available on request.",
    ]
    (folder / "good-rulebook.txt").write_text(
        f"Client Money Rules{variant}\n\n1.1 Application\n\n1.1.1 "
        + GOOD_SENTENCES["good-rulebook.txt"]
        + "\n\n1.1.2 "
        + filler[0]
        + "\n",
        encoding="utf-8",
    )
    (folder / "good-guidance.md").write_text(
        f"# Archive Guidance{variant}\n\n## 2 Destruction\n\n2.1 "
        + GOOD_SENTENCES["good-guidance.md"]
        + "\n\n2.2 "
        + filler[1]
        + "\n",
        encoding="utf-8",
    )
    standard = [
        f"Sampling Standard{variant}",
        "1. " + GOOD_SENTENCES["good-standard.pdf"],
        "2. " + filler[1],
    ]
    (folder / "good-standard.pdf").write_bytes(pdf_bytes(standard))

    for name in ("empty.pdf", "empty.txt", "empty.json"):
        (folder / name).write_bytes(b"")
    (folder / "truncated.pdf").write_bytes(pdf_bytes(standard * 20)[:-900])
    (folder / "random.pdf").write_bytes(rng.randbytes(4096))
    (folder / "random.docx").write_bytes(rng.randbytes(4096))
    (folder / "random.json").write_bytes(rng.randbytes(2048))
    (folder / "html-named.pdf").write_text(
        "<!DOCTYPE html><html><body><p>Not a PDF.</p></body></html>", encoding="utf-8"
    )
    (folder / "zip-named.pdf").write_bytes(bomb_docx(1))
    (folder / "encrypted.pdf").write_bytes(encrypted_pdf(standard))
    (folder / "scanned.pdf").write_bytes(pdf_bytes([], image_only=True))
    (folder / "text-named.docx").write_text("Just text, not a DOCX.", encoding="utf-8")
    (folder / "bomb.docx").write_bytes(bomb_docx(150))
    (folder / "nested.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    (folder / "no-text.json").write_text('[{"PassageID": "1"}]', encoding="utf-8")
    (folder / "copy-of-good-rulebook.txt").write_bytes((folder / "good-rulebook.txt").read_bytes())
    (folder / "copy-of-html-named.pdf").write_bytes((folder / "html-named.pdf").read_bytes())
    (folder / "cp1252.txt").write_bytes(
        (f"Licensing Notes{variant}\n\n4.1 " + ODD_SENTENCES["cp1252.txt"] + "\n").encode("cp1252")
    )
    depth = 20_000
    (folder / "nested.html").write_text(
        f"<html><body><h1>Notice{variant}</h1>"
        + "<div>" * depth
        + "<p>"
        + ODD_SENTENCES["nested.html"]
        + "</p>"
        + "</div>" * depth
        + "</body></html>",
        encoding="utf-8",
    )
    sentence = "Each ledger entry must name the client and the date of the transfer. "
    repeats = int(long_line_mb * 1_000_000 / len(sentence))
    (folder / "long-line.txt").write_text(
        variant
        + sentence * (repeats // 2)
        + ODD_SENTENCES["long-line.txt"]
        + " "
        + sentence * (repeats // 2),
        encoding="utf-8",
    )
    (folder / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n" + rng.randbytes(64))
    (folder / "archive.zip").write_bytes(bomb_docx(1))
    loop = folder / "link-loop.txt"
    if not loop.is_symlink():
        os.symlink(loop.name, loop)
    secret = outside / "environ"
    secret.write_text("VOYAGE_API_KEY=not-for-the-index\n", encoding="utf-8")
    link = folder / "environ.txt"
    if not link.is_symlink():
        os.symlink(secret, link)
    return folder
