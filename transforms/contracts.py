"""What makes a document a contract, and what its preamble says: the parties and the dates.

Agreements announce themselves in their first lines ("This Agreement is made ... by and
between", "WHEREAS", "WITNESSETH") or in a title naming one; the preamble then names the parties
and the date the agreement was made or takes effect. Everything here is pattern work over the
opening lines. How a contract numbers its clauses, points and definitions is read by
transforms.structure.numbering.contract; the structure builder (transforms.structure) decides
where units start.
"""

from __future__ import annotations

import re
from datetime import date

# A contract announces itself in its first lines: "This Agreement is made ... by and between",
# "WHEREAS", "WITNESSETH", "hereinafter referred to as".
_PREAMBLE_CUES = re.compile(
    r"\bby\s+and\s+(?:between|among)\b|\bwitnesseth\b|\bwhereas\b|\bhereinafter\b"
    r"|\b(?:this|the)\s+[\"“]?(?:[A-Z][\w-]*\s+){0,6}(?:agreement|contract|lease)\b"
    r"|\bentered\s+into\b|\bparties\s+hereto\b",
    re.IGNORECASE,
)
_TITLE_WORDS = re.compile(
    r"\b(?:agreement|contract|lease|license|licence|amendment|addendum|memorandum of understanding"
    r"|terms and conditions|deed|indenture|undertaking)\b",
    re.IGNORECASE,
)


def is_contract(texts: list[str]) -> bool:
    """True when the opening reads as an agreement: a title naming one, or preamble cues."""
    head = " ".join(texts[:60])[:6000]
    cues = len(_PREAMBLE_CUES.findall(head))
    titled = any(
        _TITLE_WORDS.search(t) and len(t) < 120 and not t.rstrip().endswith((".", ";", ","))
        for t in texts[:15]
    )
    return cues >= 2 or titled


# Preamble ---------------------------------------------------------------------------------------
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?"
_DATE_PATTERNS = (
    re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE),
    re.compile(
        rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE
    ),
)
_AGREEMENT_DATE = re.compile(
    r"\b(?:dated|made|entered\s+into|executed|effective)\b[^.;]{0,40}?\b(?:as\s+of|on|this|at)?\b",
    re.IGNORECASE,
)
_EFFECTIVE = re.compile(r"[\"“]Effective\s+Date[\"”]", re.IGNORECASE)
_PARTIES = re.compile(
    r"\b(?:by\s+and\s+)?(?:between|among)\s*:?\s+(.{3,600}?)(?:\.\s|$|\bWHEREAS\b|\bWITNESSETH\b|"
    r"\bRECITALS\b|\bhereinafter\s+(?:collectively|jointly))",
    re.IGNORECASE | re.DOTALL,
)
_MAKING = re.compile(r"\b(?:made|entered|dated|executed|agreement|contract)\b", re.IGNORECASE)
_PARENTHESES = re.compile(r"\([^()]{0,200}\)")
_PARTY_SPLIT = re.compile(r"\s*(?:;\s*(?:and\s+)?|,?\s+and\s*:?\s+(?=[A-Z0-9])|\band\s*:\s*)")
_CORPORATE = re.compile(
    r",\s*(?=(?:Inc|LLC|L\.L\.C|Ltd|Limited|L\.P|LP|LLP|Corp|Co|N\.A|S\.A|GmbH|plc|B\.V|AG|SE)\b\.?)",
    re.IGNORECASE,
)


def find_date(text: str) -> tuple[date, int] | None:
    """The first calendar date written out in `text`, and where it starts."""
    best: tuple[date, int] | None = None
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            groups = match.groups()
            if groups[0].isdigit():
                day, month, year = int(groups[0]), groups[1], int(groups[2])
            else:
                month, day, year = groups[0], int(groups[1]), int(groups[2])
            number = _MONTHS.get(month.casefold().rstrip("."))
            if number is None or not 1 <= day <= 31 or not 1900 <= year <= 2100:
                continue
            try:
                found = date(year, number, day)
            except ValueError:
                continue
            if best is None or match.start() < best[1]:
                best = (found, match.start())
            break
    return best


def _party_name(text: str) -> str | None:
    text = re.sub(r"\s+", " ", text).strip(" ,;:")
    # The name ends at its description (", a Delaware corporation"), a comma before "Inc." aside.
    text = _CORPORATE.sub(" ", text)
    name = re.split(
        r",|\bhaving\b|\bwith\s+(?:its|a)\b|\blocated\b|\bwhose\b|\bof\s+\d|\b(?:is|are)\s+"
        r"(?:made|hereby|entered)\b|\bdated\b|\bas\s+of\b",
        text,
    )[0]
    name = name.strip(" ,;:\"“”'-")
    if not 2 <= len(name) <= 100 or not re.search(r"[A-Z]", name):
        return None
    if name.casefold().startswith(("the parties", "each of", "both", "the undersigned")):
        return None
    return name


def _parties(head: str) -> list[str]:
    """The names after "by and between" in the sentence that makes the agreement (preferred over
    a title's "AGREEMENT BETWEEN X AND Y"), descriptions and roles in parentheses dropped."""
    found = list(_PARTIES.finditer(head))
    found.sort(key=lambda m: not _MAKING.search(head[max(0, m.start() - 250) : m.start()]))
    best: list[str] = []
    for match in found:
        span = _PARENTHESES.sub(" ", _PARENTHESES.sub(" ", match.group(1)))
        names: list[str] = []
        for piece in _PARTY_SPLIT.split(span):
            if (name := _party_name(piece)) and name not in names:
                names.append(name)
        if len(names) >= 2:
            return names[:6]
        best = best or names
    return best


def preamble(texts: list[str]) -> dict:
    """The contract's parties and dates as the preamble states them: {"parties": [...],
    "agreement_date": date | None, "effective_date": date | None}."""
    head = " ".join(texts[:40])[:5000]
    found: dict = {"parties": _parties(head), "agreement_date": None, "effective_date": None}
    for cue in _AGREEMENT_DATE.finditer(head):
        if dated := find_date(head[cue.start() : cue.end() + 60]):
            found["agreement_date"] = dated[0]
            break
    effective = _EFFECTIVE.search(head)
    if effective is not None and (
        dated := find_date(head[max(0, effective.start() - 80) : effective.start()])
    ):
        found["effective_date"] = dated[0]
    return found


def contract_title(texts: list[str]) -> str | None:
    """The agreement's name as its first lines print it ("SERVICES AGREEMENT")."""
    for text in texts[:25]:
        clean = " ".join(text.split())
        if (
            len(clean) <= 120
            and _TITLE_WORDS.search(clean)
            and not clean.endswith((".", ",", ";"))
            and (clean.upper() == clean or clean.istitle())
        ):
            return clean
    return None
