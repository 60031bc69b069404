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

from transforms.reading.pdf_text import FOOTNOTE, MARGIN_NUMBER
from transforms.structure.tree import is_title_like

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
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d_]{2,}")
# A number with its marks and no letter: "27.12.2022", "333/12", "23)".
_NUMBER_TOKEN = re.compile(r"^[^\w]*\d[\d\W_]*$")
# A page code: a letter or two before a number ("A822", "B3").
_PAGE_CODE = re.compile(r"^[^\W\d_]{1,2}\d+\W*$")
# A line with this many words besides its numbers reads as a running head's words ("8 Bribery
# Act 2010 (c. 23)").
RUNNING_HEAD_WORDS = 2
# A contents list: its heading among a page's first lines, the mark of a page that goes on
# with it, and its entries (a number and a title, a title and the number it starts at).
CONTENTS_LINES = 4
CONTENTS_SHARE = 0.8
_CONTENTS_HEADING = re.compile(r"^(?:table of )?contents$", re.IGNORECASE)
_CONTINUED = re.compile(r"^(?:\.{3}|…)\s*continued$|^\(continued\)$", re.IGNORECASE)
_CONTENTS_ENTRY = re.compile(
    r"^(?:\d{1,3}[A-Z]{0,2}|schedule \d+|part \d+|chapter \d+|appendix [A-Z])\s[^;]{0,100}$"
    r"|[^.;:]{0,100}(?:\s|\.{2,}|…)(?:[A-Z]{0,2}\d{1,4}[A-Z]?)$",
    re.IGNORECASE,
)
# A contents list's cross-heading ("General bribery offences") has at most this many words.
CONTENTS_HEADING_WORDS = 8
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
    keys = [_edge_key(t) for t in texts]
    page_list = elements["page"].to_list()
    categories = elements["category"].to_list()
    positions: dict[int, list[int]] = {}
    for index, page in enumerate(page_list):
        # Footnotes stand at the foot, but the page's own foot may come before them in
        # reading order ("2/144 ELI: ..." above the notes): a page's edges are its other lines.
        if page is not None and categories[index] != FOOTNOTE:
            positions.setdefault(page, []).append(index)
    at_edge = [False] * len(texts)
    for indexes in positions.values():
        for index in indexes[:2] + indexes[-2:]:
            at_edge[index] = True
    # a contents list's entries are no running heads of the pages whose headings they list
    contents = _contents_rows(texts, page_list)
    edge_pages: dict[str, set[int]] = {}
    for index, key in enumerate(keys):
        if at_edge[index] and len(key) <= 120 and index not in contents:
            edge_pages.setdefault(key, set()).add(page_list[index])
    threshold = max(2, int(pages * 0.3))
    marked = [_MARKED_PAGE_NUMBER.match(t) is not None for t in texts]
    beside_marked = [
        _BARE_NUMBER.match(t) is not None
        and ((i > 0 and marked[i - 1]) or (i + 1 < len(texts) and marked[i + 1]))
        for i, t in enumerate(texts)
    ]
    counted = _page_number_runs(texts, page_list) if pages >= 2 else set()
    counted |= contents
    repeated_block = _repeated_edge_blocks(elements, keys, threshold) if pages >= 2 else set()
    keep = []
    for index, (text, category) in enumerate(zip(texts, categories, strict=True)):
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
        margin = category == MARGIN_NUMBER
        keep.append(bool(text) and text != "•" and (margin or not (furniture or repeated)))
    return elements.filter(pl.Series(keep, dtype=pl.Boolean))


def _edge_key(text: str) -> str:
    """A line as running heads compare. A line of words is its words and marks in sorted
    order, without its numbers, page codes' numbers blanked ("A822" = "A824"; longer words
    holding digits, "word001", stay whole): a journal sets the date and the page reference at
    the outer edge, swapping them from left to right page to page ("27.12.2022 EN Official
    Journal of the European Union L 333/12"), and an Act's head carries the page number on
    some pages only ("8 Bribery Act 2010 (c. 23)", "Bribery Act 2010 (c. 23)"), not its title
    ("Bribery Act 2010"). A line of fewer words compares with at most two numbers blanked
    ("Page 3" = "Page 4"); a line of figures must repeat exactly."""
    text = text.casefold()
    if len(_WORD.findall(text)) >= RUNNING_HEAD_WORDS:
        tokens = (_NUMBER.sub("#", t) if _PAGE_CODE.match(t) else t for t in text.split())
        return " ".join(sorted(t for t in tokens if not _NUMBER_TOKEN.match(t)))
    if len(_NUMBER.findall(text)) > 2:
        return text
    return _NUMBER.sub("#", text)


def _contents_rows(texts: list[str], pages: list[int | None]) -> set[int]:
    """Rows of a contents list: from a "Contents" heading near a page's top to that page's
    end, and the pages after it that go on with it ("...continued"), where the lines are
    mostly entries ("1 Offences of bribing another person", "Schedule 1 — Repeals", "LESSEE
    22"). Acts and standards print one before their text; its lines would open sections of
    their own ("section 5" a contents line). A heading over a page of text (a filing's "Table
    of Contents" link atop every page) lists nothing."""
    rows_of: dict[int, list[int]] = {}
    for index, page in enumerate(pages):
        if page is not None:
            rows_of.setdefault(page, []).append(index)
    found: set[int] = set()
    listing = False
    for page in sorted(rows_of):
        rows = rows_of[page]
        heading = next(
            (i for i in rows[:CONTENTS_LINES] if _CONTENTS_HEADING.match(texts[i])), None
        )
        if heading is not None:
            rows = [i for i in rows if i > heading]
        entries = sum(1 for i in rows if _listed(texts[i]))
        continued = any(_CONTINUED.match(texts[i]) for i in rows[:CONTENTS_LINES])
        listed = entries >= CONTENTS_SHARE * len(rows)
        listing = (heading is not None or listing) and (continued or listed)
        if listing:
            found.update(rows if heading is None else [heading, *rows])
    return found


def _listed(text: str) -> bool:
    """A line as a contents list sets it: an entry, or a cross-heading over entries."""
    heading = is_title_like(text) and len(text.split()) <= CONTENTS_HEADING_WORDS
    return heading or _CONTENTS_ENTRY.search(text) is not None


def _page_number_runs(texts: list[str], pages: list[int | None]) -> set[int]:
    """Rows of bare numbers that count the pages mid-page ("1" ... "2", "3" ... "4", "5" on
    sheets of two pages): each continues the count of an earlier one on its page or a later
    page, a run holds at least PAGE_RUN of them over two pages or more, and no page more than
    two. A heading's own number on a line of its own ("1" / "DEFINITIONS") is not counted, so
    a run whose numbers mostly stand over a heading is a list of headings."""
    runs: list[list[int]] = []
    open_runs: dict[int, list[int]] = {}  # the next number -> the run waiting for it
    for index, text in enumerate(texts):
        page = pages[index]
        if _BARE_NUMBER.match(text) is None or page is None:
            continue
        value = int(text)
        run = open_runs.pop(value, None)
        # A run's numbers all have a page (above), so `before` is None only without a run.
        before = pages[run[-1]] if run else None
        if run is None or before is None or before > page:
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
