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

from lexkb.core.text.dates import find_date, find_numeric_date
from transforms.structure.titles import is_notice, without_placeholders

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
_AGREEMENT_DATE = re.compile(
    r"\b(?:dated|made|entered\s+into|executed|effective)\b[^.;]{0,40}?\b(?:as\s+of|on|this|at)?\b",
    re.IGNORECASE,
)
_EFFECTIVE = re.compile(r"[\"“]Effective\s+Date[\"”]", re.IGNORECASE)
# A date the contract states as its own, not in a sentence: "Effective 3/29/2022", "Effective
# Date: 1 May 2023"; "Last revised on March 13, 2024", "Last updated: 2024-01-09".
_STATED_EFFECTIVE = re.compile(
    r"\bEffective(?:\s+Date)?\s*(?:as\s+of|on|from)?\s*:?\s*(?=\d|[A-Z])"
)
_REVISED = re.compile(
    r"\b(?:last\s+)?(?:revised|updated|modified)\s*(?:on|as\s+of)?\s*:?\s*(?=\d|[A-Z])",
    re.IGNORECASE,
)
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
        if dated := _day(head[cue.start() : cue.end() + 60]):
            found["agreement_date"] = dated
            break
    effective = _EFFECTIVE.search(head)
    if effective is not None and (
        dated := _day(head[max(0, effective.start() - 80) : effective.start()])
    ):
        found["effective_date"] = dated
    # A published contract's own line: "Effective 3/29/2022", "Last revised on March 13, 2024".
    if found["effective_date"] is None and (stated := _STATED_EFFECTIVE.search(head)):
        found["effective_date"] = _day(head[stated.end() : stated.end() + 30])
    if found["agreement_date"] is None and (revised := _REVISED.search(head)):
        found["agreement_date"] = _day(head[revised.end() : revised.end() + 30])
    return found


def _day(text: str) -> date | None:
    """The first day `text` writes out ("March 13, 2024") or in figures that mean one day."""
    written = find_date(text)
    return written[0] if written else find_numeric_date(text)


# An exhibit's or attachment's label before a contract's name, as filings print it.
_FILING_LABEL = re.compile(
    r"^(?:(?:exhibit|attachment|annex|appendix)\s+(?:no\.?\s*)?[\w.()-]{1,12}\s*[:.\-–—]?\s*)+",
    re.IGNORECASE,
)
# The date a name line ends with: "... AGREEMENT DATED JULY 15, 2005", "dated as of ...".
_DATED = re.compile(r"\s+dated\b.*$", re.IGNORECASE)
# A name line that opens the sentence making the contract ("THIS NON-DISCLOSURE AGREEMENT is
# made on ..."): the agreement it names (_named_in) is the title.
_MAKING_LINE = re.compile(r"^this\b[^.;]{0,150}?\b(?:is|are)\s+(?:made|entered|dated)\b", re.I)
# A name's own definition of how the text calls it, after it: (the "Agreement"), ("MSA").
_SELF_DEFINED = re.compile(
    r"\s*\((?:the\s+|this\s+)?[\"“'‘][^\"”'’]{1,40}[\"”'’]\)\s*$", re.IGNORECASE
)
# Words a name keeps in lower case ("Software as a Service Agreement").
_MINOR = {"a", "an", "and", "as", "at", "between", "by", "for", "in", "of", "on", "or", "the", "to"}
# A clause's number: a numbered heading ("2. LICENSE GRANT") is no name of the whole.
_CLAUSE_NUMBER = re.compile(r"^(?:\d{1,3}(?:\.\d+)*\.?|\(?[a-z]{1,3}[.)]|[IVX]{1,4}\.)\s")
# The agreement a sentence names: "PLEASE READ THIS PREFECT SOFTWARE AS A SERVICE (SAAS)
# AGREEMENT ...", "This Master Services Agreement (the "Agreement") is made ...".
_NAMED = re.compile(
    r"\bth(?:is|ese)\s+((?:[\w()&'’.-]+\s+){0,10}?(?:agreement|contract|lease|licen[cs]e|deed"
    r"|indenture|terms\s+of\s+(?:service|use)|terms\s+and\s+conditions))\b",
    re.IGNORECASE,
)
# How far into a notice its sentence may run over lines.
_NOTICE_LINES = 3
# The kind of agreement a name ends with ("... Services Agreement", "... Terms of Service").
_NAME_ENDS = re.compile(
    r"\b(?:agreement|contract|lease|licen[cs]e|deed|indenture|terms\s+of\s+(?:service|use)"
    r"|terms\s+and\s+conditions|memorandum\s+of\s+understanding|addendum|amendment)$",
    re.IGNORECASE,
)


def _reads_as_name(text: str) -> bool:
    """Set as a name: in capitals or title case, or every word capitalised but the minor ones
    and ending in the agreement's kind ("Software as a Service (SaaS) Agreement")."""
    if text.upper() == text or text.istitle():
        return True
    if not _NAME_ENDS.search(text):
        return False
    words = [w.strip("()[]\"“”'‘’,:") for w in text.split()]
    words = [w for w in words if w[:1].isalpha()]
    return (
        bool(words)
        and words[0][0].isupper()
        and all(w[0].isupper() or w.casefold() in _MINOR for w in words)
    )


def _named_in(sentence: str) -> str | None:
    """The agreement a sentence names ("... THIS PREFECT SOFTWARE AS A SERVICE (SAAS)
    AGREEMENT ..."), in two words at least: "this Agreement" names no particular one."""
    for match in _NAMED.finditer(" ".join(sentence.split())):
        name = match.group(1)
        if len(name.split()) >= 2 and _reads_as_name(name):
            return name
    return None


def contract_title(texts: list[str]) -> str | None:
    """The agreement's name as its first lines print it ("SERVICES AGREEMENT"). A notice to the
    reader ("PLEASE READ THIS ... AGREEMENT CAREFULLY BEFORE ...") is never the title, but the
    agreement it names is, where no line before it names one; a template's blanks are no part
    of a name (transforms.structure.titles)."""
    lines = [" ".join(text.split()) for text in texts[:25]]
    for at, line in enumerate(lines):
        if is_notice(line):
            if name := _named_in(" ".join(lines[at : at + _NOTICE_LINES])):
                return name
            continue
        # "PROMOTION AGREEMENT (the "Agreement")": the name defines its own short form; a filing's
        # exhibit label before it and the date after it are no part of it ("Exhibit 10.4
        # Split-Dollar Endorsement Agreement", "AFFILIATE AGREEMENT DATED JULY 15, 2005").
        clean = _SELF_DEFINED.sub("", without_placeholders(line)).strip()
        clean = _DATED.sub("", _FILING_LABEL.sub("", clean)).strip(" ,:-–—")
        if _MAKING_LINE.match(clean) and (name := _named_in(clean)):
            return name
        if (
            len(clean) <= 120
            and _TITLE_WORDS.search(clean)
            and not clean.endswith((".", ",", ";"))
            and not _CLAUSE_NUMBER.match(clean)
            and _reads_as_name(clean)
        ):
            return clean
    return None
