"""A chunk's heading path, and the chunk read below it.

A paragraph rarely says what it is about; its headings do. Bribery Act section 11(1) ("An
individual guilty of an offence under section 1, 2 or 6 is liable...") never says "penalty":
its heading "11 Penalties" does, and a person asks "what are the penalties for bribery?". So
search reads the heading path twice over: as a BM25 field beside the paragraph's own words
(lexkb.headings) and as a second vector, the paragraph read below its heading path
(transforms.indexing.chunk_embeddings, HEADING_LINE). What a hit shows and cites stays its own text.

Shared by the build (the heading vectors) and the query module (the heading field), so both
read a chunk's headings the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

# The last entries of the path: the unit's own heading and what holds it. Higher levels
# (a Title, a Part) name little a question asks by, and every paragraph below repeats them.
CONTEXT_LEVELS = 2
# A heading path longer than this is cut (an EU act's formal title can fill a whole model input).
MAX_CONTEXT_CHARS = 240
CONTEXT_VERSION = "heading-path-2"


def heading_context(section_path: Sequence[str] | None) -> str:
    """The heading path a chunk is read under, "Chapter III ... — Article 19 Reporting of ...",
    or "" when it has none."""
    parts = [" ".join(p.split()) for p in (section_path or []) if p and p.strip()]
    text = " — ".join(parts[-CONTEXT_LEVELS:])
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[:MAX_CONTEXT_CHARS].rsplit(" ", 1)[0]
    return text


def indexed_text(content: str, section_path: Sequence[str] | None, level: str) -> str:
    """A chunk read below its heading path, as its heading vector embeds it: a section chunk
    already opens with its own heading and is read as it is."""
    context = "" if level == "section" else heading_context(section_path)
    if not context or content.startswith(context):
        return content
    return f"{context}\n{content}"
