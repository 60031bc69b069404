"""Page furniture: what a printed page carries that is not the document's text.

Running heads and feet, page numbers (at a page's edge, marked ("- 4 -", "Page 3") anywhere, or
counting on mid-page on sheets of two pages), and publishers' copyright notices are dropped
before the structure is read, so that they never open or split a unit. The element text is
cleaned here too (bullets, carriage returns, runs of spaces), the same way for the furniture
test and for the builder.
"""

from __future__ import annotations

import re
from collections import Counter

import polars as pl

from transforms.tree import is_title_like

_PAGE_NUMBER = re.compile(
    r"^[-–(\[]?\s*(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?\s*[-–)\]]?$", re.IGNORECASE
)
# A page number that says what it is ("-10-", "- 4 -", "PAGE 3") is furniture wherever it
# stands: pages printed two to a sheet carry theirs mid-sheet. A bare number beside one ("11"
# above "-10-") is the sheet's own.
_MARKED_PAGE_NUMBER = re.compile(
    r"^(?:[-–—]\s*\d{1,4}\s*[-–—]|page\s+\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?)$", re.IGNORECASE
)
_BARE_NUMBER = re.compile(r"^\d{1,4}$")
# Bare numbers counting on by one across the pages, at most two a page, are page numbers
# wherever they stand, from this many on.
PAGE_RUN = 3
# A site's or publisher's notice, not the document's text: "© 2026 Lexkb. All rights reserved."
_COPYRIGHT = re.compile(
    r"^(?:©|copyright\s+(?:©\s*)?\d{4}\b).{0,200}$|^.{0,150}\ball rights reserved\.?$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"(?<!\S)[•▪◦●](?!\S)")


def clean(text: str) -> str:
    """An element's text with bullets, carriage returns and runs of spaces gone, as both the
    furniture test and the builder read it."""
    text = _BULLET.sub(" ", text.replace("\r", ""))
    return re.sub(r"[ \t\u00a0]+", " ", text).strip()


def drop_running_text(elements: pl.DataFrame) -> pl.DataFrame:
    """Remove page furniture: page numbers and lines repeated at the edges of many pages.

    The fast PDF strategy labels continuation lines at a page top as Header, so the category alone
    would delete real text. Running heads are short, sit among the first or last two elements of
    a page and recur (digits aside) on many pages; headings such as "Article 12" recur too, but
    not at page edges on most pages.
    """
    pages = elements.select(pl.col("page").drop_nulls().n_unique()).item()
    texts = [clean(t) for t in elements["text"].to_list()]
    # Lines compare with their numbers blanked ("Page 3" = "Page 4") only when they hold at
    # most two numbers; a line of figures or numbered words must repeat exactly.
    keys = [
        re.sub(r"\d+", "#", t.casefold()) if len(re.findall(r"\d+", t)) <= 2 else t.casefold()
        for t in texts
    ]
    page_list = elements["page"].to_list()
    positions: dict[int, list[int]] = {}
    for index, page in enumerate(page_list):
        if page is not None:
            positions.setdefault(page, []).append(index)
    at_edge = [False] * len(texts)
    for indexes in positions.values():
        for index in indexes[:2] + indexes[-2:]:
            at_edge[index] = True
    edge_pages: dict[str, set[int]] = {}
    for index, key in enumerate(keys):
        if at_edge[index] and len(key) <= 120:
            edge_pages.setdefault(key, set()).add(page_list[index])
    threshold = max(2, int(pages * 0.3))
    marked = [_MARKED_PAGE_NUMBER.match(t) is not None for t in texts]
    beside_marked = [
        _BARE_NUMBER.match(t) is not None
        and ((i > 0 and marked[i - 1]) or (i + 1 < len(texts) and marked[i + 1]))
        for i, t in enumerate(texts)
    ]
    counted = _page_number_runs(texts, page_list) if pages >= 2 else set()
    repeated_block = _repeated_edge_blocks(elements, keys, threshold) if pages >= 2 else set()
    keep = []
    for index, (text, category) in enumerate(
        zip(texts, elements["category"].to_list(), strict=True)
    ):
        furniture = (
            category in ("PageBreak", "PageNumber")
            or (
                _PAGE_NUMBER.match(text) is not None
                and (at_edge[index] or category in ("Header", "Footer"))
            )
            or marked[index]
            or beside_marked[index]
            or index in counted
            or _COPYRIGHT.match(text) is not None
        )
        repeated = (
            pages >= 2 and at_edge[index] and len(edge_pages.get(keys[index], ())) >= threshold
        )
        repeated = repeated or index in repeated_block
        keep.append(bool(text) and text != "•" and not furniture and not repeated)
    return elements.filter(pl.Series(keep, dtype=pl.Boolean))


def _page_number_runs(texts: list[str], pages: list[int | None]) -> set[int]:
    """Rows of bare numbers that count the pages mid-page ("1" ... "2", "3" ... "4", "5" on
    sheets of two pages): each continues the count of an earlier one on its page or a later
    page, a run holds at least PAGE_RUN of them over two pages or more, and no page more than
    two. A heading's own number on a line of its own ("1" / "DEFINITIONS") is not counted, so
    a run whose numbers mostly stand over a heading is a list of headings."""
    runs: list[list[int]] = []
    open_runs: dict[int, list[int]] = {}  # the next number -> the run waiting for it
    for index, text in enumerate(texts):
        if _BARE_NUMBER.match(text) is None or pages[index] is None:
            continue
        value = int(text)
        run = open_runs.pop(value, None)
        if run is None or pages[run[-1]] > pages[index]:
            run = []
            runs.append(run)
        run.append(index)
        open_runs[value + 1] = run
    found: set[int] = set()
    for run in runs:
        on_page = Counter(pages[i] for i in run)
        if len(run) < PAGE_RUN or len(on_page) < 2 or max(on_page.values()) > 2:
            continue
        over_heading = sum(1 for i in run if i + 1 < len(texts) and _label_awaited(texts[i + 1]))
        if over_heading * 2 < len(run):
            found.update(run)
    return found


def _label_awaited(text: str) -> bool:
    """An unnumbered capitalised heading ("DEFINITIONS"), such as a bare number above it
    would label."""
    return is_title_like(text) and text.isupper() and not text[:1].isdigit()


def _repeated_edge_blocks(elements: pl.DataFrame, keys: list[str], threshold: int) -> set[int]:
    """Rows of layout paragraphs that open or close many pages with the same words: a running
    head of several lines ("[*] = Certain confidential information ... / 1934, as amended.")."""
    if "block" not in elements.columns:
        return set()
    rows_of: dict[tuple[int, int], list[int]] = {}
    for index, (page, block) in enumerate(
        zip(elements["page"].to_list(), elements["block"].to_list(), strict=True)
    ):
        if page is not None and block is not None:
            rows_of.setdefault((page, block), []).append(index)
    first: dict[int, tuple[int, int]] = {}
    last: dict[int, tuple[int, int]] = {}
    for page, block in rows_of:
        first[page] = min(first.get(page, (page, block)), (page, block))
        last[page] = max(last.get(page, (page, block)), (page, block))
    pages_of: dict[str, set[int]] = {}
    edge_blocks = set(first.values()) | set(last.values())
    block_key = {}
    for page_block in edge_blocks:
        key = " ".join(keys[i] for i in rows_of[page_block])
        if len(key) <= 400:
            block_key[page_block] = key
            pages_of.setdefault(key, set()).add(page_block[0])
    return {
        row
        for page_block, key in block_key.items()
        if len(rows_of[page_block]) > 1 and len(pages_of[key]) >= threshold
        for row in rows_of[page_block]
    }
