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
from collections import Counter
from datetime import date

from lexkb.core.text.dates import find_date, find_numeric_date
from transforms.structure.signatures import with_signing_parties
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


# A period that ends an abbreviation, not the sentence naming the parties: "Inc.", "Corp.",
# "St.", "21925 W. Olympic", "U.S.A." (each letter of it).
_ABBREVIATION = re.compile(
    r"\b(Inc|Corp|Co|Ltd|Bros|St|Ave|Blvd|Rd|Dr|Ste|No|Nos|Mr|Mrs|Ms|Jr|Sr|Fl|[A-Z])\.(?=[\s,A-Z])"
)
# What stands for such a period while the sentence is read (a one-dot leader).
_KEPT_DOT = "\u2024"


def _parties(head: str) -> list[str]:
    """The names after "by and between" in the sentence that makes the agreement (preferred over
    a title's "AGREEMENT BETWEEN X AND Y"), descriptions and roles in parentheses dropped."""
    head = _ABBREVIATION.sub(rf"\1{_KEPT_DOT}", head)
    found = list(_PARTIES.finditer(head))
    found.sort(key=lambda m: not _MAKING.search(head[max(0, m.start() - 250) : m.start()]))
    best: list[str] = []
    for match in found:
        span = _PARENTHESES.sub(" ", _PARENTHESES.sub(" ", match.group(1)))
        names: list[str] = []
        for piece in _PARTY_SPLIT.split(span):
            name = _party_name(piece.replace(_KEPT_DOT, "."))
            if name and name not in names:
                names.append(name)
        if len(names) >= 2:
            return names[:6]
        best = best or names
    return best


# A line the whole file repeats (a filing's "Source: ACME INC., 10-Q, 11/8/2019" footer on every
# page) is the page's furniture, never the contract's own date or parties.
_FURNITURE_REPEATS = 3
# How much of the opening the preamble reads: its first texts, furniture aside.
_OPENING_TEXTS = 40
# The sentence that makes the agreement ("This Agreement is made and entered into ... by and
# between"): the date in it is the agreement's own. A recital ("WHEREAS, ... entered into a
# Supply Agreement dated as of ...") dates another agreement.
_MAKES = re.compile(
    r"\b(?:is|are|was|were)\s+(?:hereby\s+)?(?:made|entered|dated|executed)\b|\bby\s+and\s+"
    r"(?:between|among)\b|\bentered\s+into\s+(?:as\s+of|on|this)\b",
    re.IGNORECASE,
)
_RECITAL = re.compile(r"^\s*(?:whereas|recitals?)\b", re.IGNORECASE)
# A date line of its own: "Dated: March 9, 2015", "Date: 1 May 2023", or a date alone.
_DATE_LINE = re.compile(r"^\s*(?:dated|date(?:\s+of\s+agreement)?)\s*[:.]?\s*", re.IGNORECASE)
# The agreement takes effect with its making: "made and effective as of 1 August 2019",
# "effective as of the date first written above".
_EFFECTIVE_AS_MADE = re.compile(
    r"\beffective\s+(?:as\s+of|on|from)\b|\b(?:made|entered\s+into)\s+(?:and\s+)?effective\b",
    re.IGNORECASE,
)


# How far into a contract its "Effective Date" may be defined: the definitions and the term
# clause come early, a schedule's dates late.
_DEFINITION_TEXTS = 400
# "the date hereof (the "Effective Date")", "the date of signature (the "Effective Date")".
_AS_MADE_NAMED = re.compile(
    r"\bdate\s+(?:hereof|of\s+(?:this\s+agreement|signature|execution))\s*\(?\s*(?:the|this)?\s*$",
    re.IGNORECASE,
)
# After the defined name: "means", "shall mean", "is", "shall be", "of this Agreement is".
_DEFINED_AS = re.compile(
    r"[\s,)]*(?:of\s+this\s+agreement\s+)?(?:\(herein[^)]{0,60}\)\s*)?"
    r"(?:shall\s+mean|means|shall\s+be|is|will\s+be)\s*:?\s*",
    re.IGNORECASE,
)
# "This Agreement shall be effective as of January 1, 2012", "shall become effective on ...".
_EFFECTIVE_OF = re.compile(
    r"\bthis\s+agreement\s+(?:shall|will)\s+(?:be(?:come)?\s+)?effective\s+(?:as\s+of|on|from)"
    r"[^.;]{0,60}",
    re.IGNORECASE,
)
# "... executed this Agreement effective as of the date first written above".
_FIRST_WRITTEN = re.compile(
    r"\beffective\s+as\s+of\s+the\s+date\s+first\s+(?:above\s+)?(?:written|set\s+forth|listed"
    r"|stated)\b",
    re.IGNORECASE,
)


def opening(texts: list[str]) -> list[str]:
    """The contract's first texts as a reader meets them, without the furniture every page
    repeats."""
    counts = Counter(texts)
    return [t for t in texts[: _OPENING_TEXTS * 2] if counts[t] < _FURNITURE_REPEATS][
        :_OPENING_TEXTS
    ]


def preamble(texts: list[str]) -> dict:
    """The contract's parties (the preamble's, then those only its signature block names) and
    dates as the preamble states them: {"parties": [...],
    "agreement_date": date | None, "effective_date": date | None}."""
    first = opening(texts)
    head = " ".join(first)[:5000]
    made = _agreement_date(first)
    effective = _effective_date(texts, first, head, made)
    if made is None and (revised := _REVISED.search(head)):
        made = _day(head[revised.end() : revised.end() + 30])
    parties = with_signing_parties(_parties(head), texts)
    return {"parties": parties, "agreement_date": made, "effective_date": effective}


def _effective_date(
    texts: list[str], first: list[str], head: str, made: date | None
) -> date | None:
    """The day the contract says it takes effect: where it defines its "Effective Date" (a day
    before or after the definition, wherever it stands: "as of June 26, 2015 (the "Effective
    Date")", ""Effective Date" means July 15, 2005", "11.1 Term. This Agreement shall be
    effective as of January 1, 2012"), or the day it was made where it says it takes effect then
    ("the date hereof (the "Effective Date")", "made and effective as of", "effective as of the
    date first written above"); a published contract's own "Effective 3/29/2022" line."""
    for text in texts[:_DEFINITION_TEXTS]:
        for named in _EFFECTIVE.finditer(text):
            before = text[max(0, named.start() - 80) : named.start()]
            if dated := _day(before):
                return dated
            if _AS_MADE_NAMED.search(before):
                return made
            after = _DEFINED_AS.match(text, named.end())
            if after and (dated := _day(text[after.end() : after.end() + 40])):
                return dated
        if (sentence := _EFFECTIVE_OF.search(text)) and (dated := _day(sentence.group(0)[-60:])):
            return dated
    if stated := _STATED_EFFECTIVE.search(head):
        return _day(head[stated.end() : stated.end() + 30])
    if any(_MAKES.search(t) and _EFFECTIVE_AS_MADE.search(t) for t in first) or any(
        _FIRST_WRITTEN.search(t) for t in texts
    ):
        return made
    return None


def _agreement_date(first: list[str]) -> date | None:
    """The day the sentence making the agreement gives ("made ... as of the 31st day of July,
    2019"), else a date line of its own ("Dated: March 9, 2015"), else a dating cue outside the
    recitals, which date other agreements."""
    making = [t for t in first if _MAKES.search(t) and not _RECITAL.match(t)]
    if dated := _cued_day(making):
        return dated
    for text in first:
        line = _DATE_LINE.sub("", text) if _DATE_LINE.match(text) else text
        if len(line) <= 40 and (written := find_date(line)) and written[1] <= 2:
            return written[0]
    return _cued_day([t for t in first if not _RECITAL.match(t)])


def _cued_day(texts: list[str]) -> date | None:
    """The first day written just after a dating cue ("dated", "made ... as of") in `texts`."""
    for text in texts:
        for cue in _AGREEMENT_DATE.finditer(text):
            if dated := _day(text[cue.start() : cue.end() + 60]):
                return dated
    return None


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


# A name in capitals run in with the text that follows it, as a filing's plain text joins them:
# "COOPERATION AGREEMENT This Cooperation Agreement (this "Agreement") is made ...". Read in a
# contract's first lines only: further on, such a line is a clause's heading.
_RUN_IN_NAME = re.compile(
    r"^((?:[A-Z0-9][A-Z0-9&'’.,()/-]*\s+){0,10}?(?:AGREEMENT|CONTRACT|LEASE|LICEN[CS]E|DEED"
    r"|INDENTURE|ADDENDUM|AMENDMENT))(?=\s+(?:[A-Z][a-z]|[A-Z]\s))"
)
_RUN_IN_LINES = 6


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
        if at < _RUN_IN_LINES and (run_in := _RUN_IN_NAME.match(clean)):
            return run_in.group(1)
        if (
            len(clean) <= 120
            and _TITLE_WORDS.search(clean)
            and not clean.endswith((".", ",", ";"))
            and not _CLAUSE_NUMBER.match(clean)
            and _reads_as_name(clean)
        ):
            return clean
    return None


# Renewal ------------------------------------------------------------------------------------------
# A duration as contracts write it: "one (1) year", "twelve (12) months", "1-year", "2 years".
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "eighteen": 18, "twenty": 20,
    "twenty-four": 24, "thirty": 30, "thirty-six": 36, "sixty": 60, "ninety": 90,
}  # fmt: skip
_DURATION = re.compile(
    r"\b(?:(" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")\s*(?:\((\d{1,3})\))?"
    r"|(\d{1,3}))[\s-]*(year|month|day)s?\b",
    re.IGNORECASE,
)
# The sentence that renews the term: "shall automatically renew for successive one (1) year
# terms", "will be renewed for additional periods of 12 months", "may extend the Term for an
# additional year". The verb, not a heading's "Term and Renewal", which the initial term follows.
_RENEWS = re.compile(
    r"\brenew(?:s|ed|ing)?\b|\brenewal\s+(?:terms?|periods?)\s+(?:of|for)\b"
    r"|\bextend(?:s|ed)?\s+(?:automatically|(?:the\s+term\s+)?for)\b",
    re.IGNORECASE,
)
_SUCCESSIVE = re.compile(r"\b(?:successive|consecutive|additional|further)\b", re.IGNORECASE)
# A year that is one without a number: "annual periods", "renewing annually", "year to year",
# "an additional year".
_A_YEAR = re.compile(
    r"\bannual(?:ly)?\b|\byear[\s-]+to[\s-]+year\b|\ban?\s+(?:additional\s+|successive\s+)?year\b",
    re.IGNORECASE,
)


def renewal_term(texts: list[str]) -> str | None:
    """How long each renewal of the contract's term runs, as a reviewer notes it ("successive 1
    year", "3 years"), from the first sentence that renews the term and says for how long; None
    where no sentence does (a contract that ends, or renews only by a new agreement)."""
    text = " ".join(texts)
    for cue in _RENEWS.finditer(text):
        start = text.rfind(". ", 0, cue.start()) + 1
        end = text.find(". ", cue.end())
        sentence = text[start : end if end != -1 else len(text)]
        after = sentence[cue.start() - start :]
        duration = _DURATION.search(after)
        yearly = _A_YEAR.search(after)
        if yearly and (duration is None or yearly.start() < duration.start()):
            lead = "successive " if _SUCCESSIVE.search(after) or "annual" in yearly[0] else ""
            return f"{lead}1 year"
        if duration is None:
            continue
        word, figure, digits, unit = duration.groups()
        count = int(figure or digits or _NUMBER_WORDS[word.casefold()])
        if count == 0:
            continue
        lead = "successive " if _SUCCESSIVE.search(after[: duration.start()]) else ""
        return f"{lead}{count} {unit.casefold()}{'s' if count != 1 else ''}"
    return None
