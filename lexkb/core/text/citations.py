"""Finding the cross-references a paragraph makes, in the ways legal drafters write them.

A citation is parsed into `Citation`s, one per unit it names: "Rules 18.5.1 and 18.5.2" gives two,
"Articles 13 to 15" gives three, "points (c) and (e) of paragraph 1" gives two units inside
paragraph 1. Each carries the document it names, if any ("GEN 3.3.31", "section 58 of FSMR",
"Article 6 of Regulation (EU) 2016/679"), and whether it counts from the citing paragraph
("paragraph 1" inside an article means that article's paragraph 1). Matching them to chunks is
`transforms.edges.resolve`' job (lookups use it too: lexkb.lookup); this module only reads text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from lexkb.core.text.refs import ref_address

# How a unit is named in running text -> the kind used in addresses (see lexkb.core.text.refs).
_KIND_WORDS = {
    "article": "article",
    "art": "article",
    "rule": "rule",
    "section": "section",
    "s": "section",
    "ss": "section",
    "§": "section",
    "§§": "section",
    "paragraph": "paragraph",
    "para": "paragraph",
    "subparagraph": "subparagraph",
    "sub-paragraph": "subparagraph",
    "point": "point",
    "recital": "recital",
    "chapter": "chapter",
    "part": "part",
    "annex": "annex",
    "appendix": "appendix",
    "appendice": "appendix",
    "app": "appendix",
    "schedule": "schedule",
}
# Kinds whose bare number counts from the citing paragraph's own article or rule.
RELATIVE_KINDS = frozenset({"paragraph", "subparagraph", "point"})
# Kinds that name a whole unit of the citing text in "this Article", "this Section".
_THIS_KINDS = r"Article|Section|Chapter|Part|Rule|paragraph|Annex|Appendix|Schedule|Title"
# Names of the citing document itself: "this Regulation", "these Rules", "this Rulebook".
_SELF_NAMES = r"Regulations?|Rules|Rulebook|Guidance|Directive|Act|Code|Standard|Law|Decision"
_MAX_RANGE = 60

_NUMBER = (
    r"(?:[A-Z]{1,3}(?=\d))?\d+[A-Za-z]{0,2}(?:\.[A-Z]{0,2}\d+[A-Za-z]{0,2}|\.[A-Z](?=\.\d))*"
    # Upper-case labels (the US Code's "(A)", "(I)", "(AA)") only written straight after the
    # number or label before them: "Article 6 (GDPR)" is a name, not a point.
    r"(?:\s?\((?:[a-z]{1,4}|\d{1,3}|[ivxlc]{1,6})\)|\([A-Z]{1,4}\))*"
    r"|(?:\((?:[a-z]{1,4}|\d{1,3})\))+"
)
_OUTSIDE = (
    # EU acts: "Regulation (EU) 2016/679", "Directive 95/46/EC", "Regulation (EC) No 45/2001".
    r"\b(?:Regulation|Directive|Decision)\s*(?:\((?:EU|EC|EEC|Euratom)\)\s*)?(?:No\.?\s*)?"
    r"\d{2,4}/\d{1,4}(?:/(?:EU|EC|EEC|JHA|CFSP))?"
    # National laws by number and year: "Federal Law No. (7) of 2014".
    r"|\b(?:Federal\s+)?(?:Decree[\s-]+)?(?:Law|Decision|Resolution)\s+No\.?\s*\(?\d+\)?"
    r"\s+of\s+\d{4}"
)
# A capitalised name ending like an act ("the Insolvency Regulations"): after "of", it says the
# units before it belong to a text outside the index, so they must not resolve in this one.
_NAMED_ACT = (
    r"\b(?:[A-Z][\w'’-]*\s+){0,6}(?:Regulations|Rules|Rulebook|Act|Law|Code|Directive|Guidance)"
    r"(?:\s+(?:on|for)\s+(?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,4})?"
    r"\b(?:\s+(?:19|20)\d\d\b(?!\.\d))?(?!\s+\d)"
)
# A run of lower-case words that can take no part in a citation is one token: most of a text is
# prose, and scanning it word by word through every alternative is what reading costs.
_GRAMMAR_WORDS = (
    r"and|or|to|through|of|in|under|the|this|these|that|articles?|arts?|rules?|sections?|ss?"
    r"|paragraphs?|paras?|sub|subparagraphs?|points?|recitals?|chapters?|parts?|annex|annexes"
    r"|appendix|appendices|app|schedules?|titles?"
)
_PLAIN_WORDS = rf"(?:\b(?!(?:{_GRAMMAR_WORDS})\b)[a-z][\w'’]*[ \t\n]*)+"
_KIND = (
    r"\b(?:articles?|arts?\.|rules?|sections?|ss?\.|paragraphs?|paras?\.|sub-?paragraphs?"
    r"|points?|recitals?|chapters?|parts?|annex(?:es)?|appendix|appendices|app\.?|schedules?)"
    r"(?=\s*(?:\d|[A-Z]{1,3}\d|\())|§§?"
)


@dataclass(frozen=True)
class Citation:
    """One cited unit. `document` is the name as written (None: the citing document itself,
    unless `outside` says it is an act outside the index); `address` is in lexkb.core.text.refs form. A
    `relative` citation counts from the citing unit, at the level its `anchor` kind names
    ("points (c) and (e) of paragraph 1" is anchored by "paragraph")."""

    text: str
    start: int
    end: int
    kind: str | None
    address: tuple[str, ...]
    document: str | None = None
    relative: bool = False
    anchor: str | None = None
    outside: bool = False

    @property
    def bare(self) -> bool:
        """A number with no word naming it ("see 3.3.32"): trusted only when it matches exactly."""
        return self.kind is None and self.document is None


@dataclass
class _Token:
    type: str
    text: str
    start: int
    end: int


def _us_outside(names: list[str]) -> str:
    """Other US laws, never units of a title in the index: another title of the Code ("section
    1001 of title 18", "15 U.S.C. 1127", "part 258 of title 37, Code of Federal Regulations")
    and public laws ("Public Law 106–113", "Pub. L. 94–553"). The index's own titles ("Title
    17", "17 U.S.C.") stay its own."""
    own = sorted({m.group(1) or m.group(2) for n in names if (m := _OWN_TITLE.fullmatch(n))})
    not_own = rf"(?!(?:{'|'.join(own)})\b)" if own else ""
    return (
        rf"\b(?i:title)\s+{not_own}\d{{1,2}}\b(?:,\s+(?:United\s+States\s+Code|Code\s+of\s+"
        rf"Federal\s+Regulations))?|\b{not_own}\d{{1,2}}\s+U\.\s?S\.\s?C\.(?:\s+App\.)?"
        r"|\b(?:Public\s+Law|Pub\.\s?L\.)\s+\d{1,3}[–-]\d{1,4}"
    )


_OWN_TITLE = re.compile(r"(?:Title\s+(\d{1,2})|(\d{1,2})\s+U\.S\.C\.)")


class CitationParser:
    """Compiled once per index: the document names it knows are part of its grammar."""

    def __init__(self, document_names: Iterable[str] = ()) -> None:
        names = sorted({n for n in document_names if n and len(n) >= 2}, key=len, reverse=True)
        sensitive = [re.escape(n) for n in names if len(n.split()) < 3]
        insensitive = [re.escape(n) for n in names if len(n.split()) >= 3]
        doc_parts = []
        if insensitive:
            doc_parts.append(r"(?i:" + "|".join(insensitive) + ")")
        if sensitive:
            doc_parts.append("|".join(sensitive))
        doc = r"(?<![\w/])(?:" + "|".join(doc_parts) + r")(?![\w/])" if doc_parts else r"(?!x)x"
        self._scanner = re.compile(
            "|".join(
                [
                    rf"(?P<prose>{_PLAIN_WORDS})",
                    rf"(?P<this>\b(?:this|these|that)\s+(?:{_THIS_KINDS})\b(?!\s*\d))",
                    rf"(?P<self>\b(?:this|these|the\s+present)\s+(?:{_SELF_NAMES})\b)",
                    rf"(?P<doc>{doc})",
                    rf"(?P<outside>{_OUTSIDE}|{_us_outside(names)})",
                    rf"(?P<act>{_NAMED_ACT})",
                    rf"(?P<kind>(?i:{_KIND}))",
                    rf"(?P<number>(?:(?<![\w.,/])|(?<=[Aa]pp)|(?<=[Aa]rt)|(?<=[Aa]rt\.)|(?<=§))(?:{_NUMBER})"
                    r"(?![\w/%]|\.\d|,\d))",
                    r"(?P<range>\b(?:to|through)\b|[-–—](?=\s*[\d(A-Z]))",
                    r"(?P<conn>,|\band/or\b|\band\b|\bor\b)",
                    r"(?P<of>\b(?:of|in|under)\b)",
                    r"(?P<the>\bthe\b)",
                    r"(?P<word>[\w'’]+|[^\s\w])",
                ]
            )
        )

    def parse(self, text: str) -> Parsed:
        clean = re.sub(r"[\u200b-\u200f\u202a-\u202e\u2060\ufeff]", " ", text)
        tokens = [
            _Token(m.lastgroup or "word", m.group(0), m.start(), m.end())
            for m in self._scanner.finditer(clean)
        ]
        found: list[Citation] = []
        i = 0
        while i < len(tokens):
            consumed, citations = _parse_group(tokens, i, clean)
            found.extend(citations)
            i = max(consumed, i + 1)
        named = [(t.start, t.text) for t in tokens if t.type == "doc"]
        return Parsed(found, named)


@dataclass(frozen=True)
class Parsed:
    """The citations of a text, and where it names documents (cited or not: "the following
    sections of the FSMR: (a) section 215 ..." names the FSMR for section 215)."""

    citations: list[Citation]
    documents: list[tuple[int, str]]


def _kind_of(word: str) -> str:
    word = word.casefold().rstrip(".")
    if word in _KIND_WORDS:
        return _KIND_WORDS[word]
    for suffix in ("es", "s"):
        if word.endswith(suffix) and word[: -len(suffix)] in _KIND_WORDS:
            return _KIND_WORDS[word[: -len(suffix)]]
    return word


@dataclass
class _Item:
    kind: str | None
    number: str
    start: int
    end: int
    document: str | None
    range_end: bool = False


def _parse_group(tokens: list[_Token], i: int, text: str) -> tuple[int, list[Citation]]:
    """Parse the citation starting at token i, if any; returns the next index and citations."""
    token = tokens[i]
    if token.type == "outside":
        return i + 1, [_outside(token)]
    if token.type not in ("doc", "kind", "number"):
        return i + 1, []
    items: list[_Item] = []
    document: str | None = None
    kind: str | None = None
    j = i
    pending_range = False
    while j < len(tokens):
        start = tokens[j].start
        k = j
        if tokens[k].type == "doc":
            document = tokens[k].text
            k += 1
        if k < len(tokens) and tokens[k].type == "kind":
            kind = _kind_of(tokens[k].text)
            k += 1
        if k >= len(tokens) or tokens[k].type != "number":
            break
        number = tokens[k]
        if kind is None and document is None and not _dotted(number.text):
            break
        if items and start == tokens[k].start and not _same_shape(items[-1].number, number.text):
            break
        value = number.text
        own_word = start != number.start
        if (
            value.startswith("(")
            and items
            and not own_word
            and not items[-1].number.startswith("(")
        ):
            # "Rule 4.4.1(3) or (4)": the point belongs to the number before it.
            value = re.sub(r"(?:\s?\([^)]*\))+$", "", items[-1].number) + value
        items.append(_Item(kind, value, start, number.end, document, pending_range))
        j = k + 1
        pending_range = False
        if j < len(tokens) and tokens[j].type in ("conn", "range"):
            nxt = j + 1
            while nxt < len(tokens) and tokens[nxt].type in ("conn", "the"):
                nxt += 1
            if nxt < len(tokens) and tokens[nxt].type in ("doc", "kind", "number"):
                pending_range = tokens[j].type == "range"
                j = nxt
                continue
        break
    if not items:
        return i + 1, []
    containers, qualifier, j = _trailing(tokens, j)
    outside_name = qualifier if j > 0 and tokens[j - 1].type in ("outside", "act") else None
    citations: list[Citation] = []
    items = _expand_ranges(items)
    # "Rules 8.8.5, 8.8.9 and Part 10 of the FSMR": what follows the list qualifies Part 10 only.
    last_kind_start = max(
        (n for n, item in enumerate(items) if n == 0 or item.kind != items[n - 1].kind), default=0
    )
    for n, item in enumerate(items):
        doc = item.document
        if doc is None and qualifier is not None and n >= last_kind_start:
            doc = qualifier
        address = _item_address(item)
        outermost: _Item | _Container = item
        for container in containers if n >= last_kind_start else []:
            if _bare(container.address) != _bare(address)[: len(container.address)]:
                address = container.address + address  # "Section 5.11 of Chapter 5" adds nothing
            outermost = container
        relative = doc is None and (
            getattr(outermost, "this", False)
            or (outermost.kind in RELATIVE_KINDS and not _dotted(outermost.number))
        )
        citations.append(
            Citation(
                text=text[item.start : item.end],
                start=item.start,
                end=item.end,
                kind=item.kind,
                address=address,
                document=doc if doc != "self" else None,
                relative=relative,
                anchor=outermost.kind if relative else None,
                outside=doc is not None and doc == outside_name,
            )
        )
    return j, citations


@dataclass(frozen=True)
class _Container:
    kind: str
    number: str
    address: tuple[str, ...]
    this: bool = False


def _trailing(tokens: list[_Token], j: int) -> tuple[list[_Container], str | None, int]:
    """Read "of paragraph 1 of Article 6 of the FSMR" after a list: containers (innermost first)
    and the document that qualifies the list. Prefixing each container in turn gives "point (a)
    of paragraph 1 of Article 6" the address ("article6", "1", "a")."""
    containers: list[_Container] = []
    qualifier: str | None = None
    while j < len(tokens) and tokens[j].type == "of":
        k = j + 1
        while k < len(tokens) and tokens[k].type == "the":
            k += 1
        if k >= len(tokens):
            break
        token = tokens[k]
        if token.type in ("doc", "self", "outside", "act"):
            qualifier = "self" if token.type == "self" else token.text
            return containers, qualifier, k + 1
        if token.type == "this":
            containers.append(_Container(_kind_of(token.text.split()[-1]), "", (), this=True))
            j = k + 1
            continue
        if (
            token.type == "kind"
            and k + 1 < len(tokens)
            and tokens[k + 1].type == "number"
            and tokens[j].text.casefold() == "of"
        ):
            kind, number = _kind_of(token.text), tokens[k + 1].text
            address = _item_address(_Item(kind, number, 0, 0, None))
            containers.append(_Container(kind, number, address))
            j = k + 2
            continue
        break
    return containers, qualifier, j


def _item_address(item: _Item) -> tuple[str, ...]:
    prefix = {"article": "article ", "recital": "recital ", "part": "part ", "chapter": "chapter "}
    prefix |= {"annex": "annex ", "appendix": "appendix ", "schedule": "schedule "}
    number = item.number.strip()
    if item.kind in prefix and number[:1].isdigit():
        return ref_address(prefix[item.kind] + number)
    return ref_address(number)


def _bare(address: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(re.sub(r"^(?:chapter|part)(?=\d)", "", atom) for atom in address)


def _dotted(number: str) -> bool:
    return bool(re.search(r"\w\.\w", number))


def _same_shape(previous: str, number: str) -> bool:
    """Whether an unnamed list item continues the list: "Rule 3.2 and 20" is not a list."""
    if number.startswith("("):
        return True
    return _dotted(previous) == _dotted(number)


def _expand_ranges(items: list[_Item]) -> list[_Item]:
    """ "13 to 15" -> 13, 14, 15; "3.2.1-3.2.4" -> 3.2.1 ... 3.2.4; "(a) to (h)" -> (a) ... (h)."""
    out: list[_Item] = []
    for item in items:
        if item.range_end and out:
            first = out[-1]
            out.extend(_between(first, item))
            # Every unit of a range is cited by the whole range's text.
            first.end = item.end
            item = _Item(item.kind, item.number, first.start, item.end, item.document)
        out.append(item)
    return out


def _between(first: _Item, last: _Item) -> list[_Item]:
    a, b = first.number.strip(), last.number.strip()
    head_a, tail_a = _split_last(a)
    head_b, tail_b = _split_last(b)
    if head_a != head_b or tail_a is None or tail_b is None:
        return []
    if tail_a.isdigit() and tail_b.isdigit():
        lo, hi = int(tail_a), int(tail_b)
        values = [str(v) for v in range(lo + 1, hi)] if 0 < hi - lo <= _MAX_RANGE else []
    elif len(tail_a) == len(tail_b) == 1 and tail_a.isalpha() and tail_b.isalpha():
        values = [chr(c) for c in range(ord(tail_a) + 1, ord(tail_b))]
    else:
        values = []
    wrap = ("(", ")") if b.endswith(")") and not head_b.endswith(".") else ("", "")
    return [
        _Item(last.kind, f"{head_b}{wrap[0]}{v}{wrap[1]}", first.start, last.end, last.document)
        for v in values
    ]


def _split_last(number: str) -> tuple[str, str | None]:
    match = re.fullmatch(r"(.*?)(?:\((\w+)\)|(\d+))", number)
    if not match:
        return number, None
    return match.group(1), match.group(2) or match.group(3)


def _outside(token: _Token) -> Citation:
    name = " ".join(token.text.split())
    return Citation(name, token.start, token.end, None, (), document=name, outside=True)
