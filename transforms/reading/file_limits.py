"""Limits on what one source file may cost a build; every one is a setting with a sane default.

They bound the damage a hostile or broken file can do (a PDF of a million pages, a DOCX that
unzips to gigabytes, a parser that never returns) without refusing any real legal document:
the GDPR is 93 pages and 0.5 MB of text, the largest CUAD contract 107 pages.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ParseLimits:
    timeout_seconds: float = 300.0
    memory_mb: float = 3000.0
    max_pages: int = 5000
    # What a DOCX (a ZIP of XML) may unzip to.
    max_unzipped_mb: float = 100.0
    # Extracted characters: a 10 MB text file fits; it is cut into paragraphs, not refused.
    max_chars: int = 50_000_000
    # Files parsed at once, each in its own process.
    workers: int = 2
