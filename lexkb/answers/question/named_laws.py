"""The laws, regulators, standards and jurisdictions a question names, and whether the index
holds them.

"Which AI practices are prohibited under the EU AI Act?" asked of ADGM's rulebooks finds
paragraphs on prohibited practices and artificial intelligence that read as relevant; what
gives the question away is a name. A person who names a law wants that law: when none of the
names a question gives is one the index holds or even mentions, the answer says so, naming the
law asked about and the documents served, instead of quoting a neighbouring rule.

A name is read from the question by its form: an EU designation ("Regulation (EU) 2016/679"),
capitalised words ending in a legal head word ("California Consumer Privacy Act", "Companies
Act 2006", "Conduct of Business Rules"), a well-known acronym (NAMES: "HIPAA", "MiFID II",
"SEC"), or a jurisdiction in a legal frame ("under German law", "the laws of Delaware"). A name
is known to the index when its capitalised words occur in the index's text, headings or
document names (lexkb.answers.question.scope's vocabulary: a rulebook that says "FATCA" knows FATCA), or
when its words occur side by side there. A name not known is foreign.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from typing import Literal

from lexkb.answers.index_view import IndexView
from lexkb.answers.question.party_names import named_parties
from lexkb.answers.question.scope import OPENERS, vocabulary
from lexkb.core.text.keys import file_key
from lexkb.core.text.refs import document_names, short_name
from lexkb.core.text.tokenize import tokenize

NameKind = Literal["law", "regulator", "standard", "jurisdiction"]

# Acronyms and short names people cite laws, standards and regulators by. A question naming one
# the index never says is about something else, however well its other words match.
_LAWS = (
    "GDPR CCPA CPRA HIPAA GLBA COPPA FERPA FCRA PIPEDA LGPD PIPL PDPA POPIA APPI BDSG "
    "MiFID MiFIR EMIR AIFMD UCITS SFDR CSRD CSDDD NFRD DORA DMA DSA NIS2 PSD2 PSD3 MiCA "
    "CRR CRD PRIIPs SOX FCPA FATCA AMLD 4AMLD 5AMLD 6AMLD UK-GDPR ERISA TILA RESPA "
    "ECOA FDCPA TCPA CAN-SPAM DMCA"
)
_STANDARDS = "IFRS IAS GAAP ISA ISO SOC PCI-DSS NIST TCFD ISSB GRI ESRS SASB FATF Basel"
_REGULATORS = (
    "SEC FINRA CFTC FCA PRA DFSA VARA ESMA EBA EIOPA ECB FinCEN OFAC FTC CFPB OCC FDIC MAS "
    "SFC ASIC APRA ICO CNIL BaFin SAMA CBUAE FSRA ADGM DIFC OSFI IOSCO HMRC IRS EDPB"
)
NAMES: dict[str, NameKind] = {
    **dict.fromkeys(_LAWS.split(), "law"),
    **dict.fromkeys(_STANDARDS.split(), "standard"),
    **dict.fromkeys(_REGULATORS.split(), "regulator"),
}
# A number or roman numeral after an acronym belongs to its name: "MiFID II", "ISO 27001".
_NAME_TAIL = r"(?:\s+(?:II|III|IV|\d{1,5}(?:-\d{1,3})?))?"
_ACRONYM = re.compile(
    r"(?<![\w-])(" + "|".join(sorted(map(re.escape, NAMES), key=len, reverse=True)) + r")"
    + _NAME_TAIL + r"(?![\w-])"
)  # fmt: skip
_EU_DESIGNATION = re.compile(
    r"\b(?:Regulation|Directive|Decision)\s*\((?:EU|EC|EEC)\)\s*(?:No\s*)?\d{2,4}/\d{1,4}"
    r"|\bDirective\s+\d{2,4}/\d{1,4}/(?:EU|EC|EEC)\b"
)
_HEAD = (
    r"(?:Act|Regulations?|Directive|Code|Rules|Rulebook|Law|Ordinance|Statute|Convention|Treaty)"
)
_CAPITALISED_WORD = r"[A-Z][\w’'.&-]*"
_JOINING = r"(?:of|and|the|for|on|in|to|\(|\))"
_NAMED_ACT = re.compile(
    rf"((?:{_CAPITALISED_WORD}\s+)(?:(?:{_CAPITALISED_WORD}|{_JOINING}|\([^)]{{1,40}}\))\s+){{0,7}}"
    rf"{_HEAD}(?:\s+(?:of\s+)?\d{{4}})?)\b"
)
_JURISDICTIONS = (
    "California|New York|Texas|Delaware|Florida|Illinois|Massachusetts|Washington|Virginia|"
    "Colorado|Ontario|Quebec|Canada|Australia|New Zealand|Singapore|Hong Kong|China|Japan|India|"
    "Germany|France|Italy|Spain|Netherlands|Ireland|Switzerland|Luxembourg|Sweden|Brazil|Mexico|"
    "South Africa|Nigeria|Kenya|Saudi Arabia|Qatar|Bahrain|Dubai|Scotland|England|Wales|"
    "Northern Ireland|Jersey|Guernsey|Cayman Islands|German|French|Italian|Spanish|Dutch|Irish|"
    "Swiss|Canadian|Australian|Singaporean|Chinese|Japanese|Indian|Brazilian|Californian|"
    "Scottish|English|US|U\\.S\\.|USA|UK|U\\.K\\.|EU|UAE|American|British|European"
)
_PLACE = re.compile(rf"(?:{_JURISDICTIONS})")
_JURISDICTION_FRAME = re.compile(
    rf"\b(?:(?:the\s+)?laws?\s+of\s+(?:the\s+)?({_JURISDICTIONS})\b"
    rf"|({_JURISDICTIONS})(?:['’]s)?\s+(?:law|laws|legislation|statutes?|courts?|regulators?|"
    rf"rules|regulations|authorities)\b)"
)


@dataclass(frozen=True)
class Named:
    """What a question names: each name with its kind, and which of them the index knows."""

    names: tuple[tuple[str, NameKind], ...]
    known: tuple[str, ...]
    foreign: tuple[str, ...]

    @property
    def foreign_as_written(self) -> list[str]:
        """The foreign names as a sentence names them: "the EU AI Act", "MiFID II", "German
        law"."""
        kinds = dict(self.names)
        return [_as_written(name, kinds.get(name, "law")) for name in self.foreign]

    @property
    def only_foreign(self) -> bool:
        """The question names something, and nothing it names is in the index."""
        return bool(self.foreign) and not self.known


def _as_written(name: str, kind: NameKind) -> str:
    if kind == "jurisdiction":
        return f"{name} law"
    if re.search(rf"\b{_HEAD}(?:\s+(?:of\s+)?\d{{4}})?$", name) and not name.startswith("the "):
        return f"the {name}"
    return name


def names_in(question: str) -> list[tuple[str, NameKind]]:
    """The names of laws, standards, regulators and jurisdictions `question` gives, in order."""
    found: list[tuple[int, str, NameKind]] = []
    for match in _EU_DESIGNATION.finditer(question):
        found.append((match.start(), match.group(0), "law"))
    for match in _NAMED_ACT.finditer(question):
        name = _without_openers(match.group(1))
        if name and not _generic(name):
            found.append((match.start(1) + match.group(1).index(name), name, "law"))
    for match in _ACRONYM.finditer(question):
        found.append((match.start(), match.group(0), NAMES[match.group(1)]))
    for match in _JURISDICTION_FRAME.finditer(question):
        place = match.group(1) or match.group(2)
        found.append((match.start(), place, "jurisdiction"))
    return _outermost(found)


def _without_openers(name: str) -> str:
    """The name without the words before it that only open the sentence ("Under the")."""
    words = name.split()
    while words and (words[0] in OPENERS or words[0] in ("of", "and", "the", "for", "on", "in")):
        words = words[1:]
    return " ".join(words)


def _generic(name: str) -> bool:
    """A head word alone, or with a determiner's worth of words ("Rules", "Data Act" is not)."""
    words = name.split()
    return len(words) < 2 or not any(w[0].isupper() for w in words[:-1])


def _outermost(found: list[tuple[int, str, NameKind]]) -> list[tuple[str, NameKind]]:
    """Each span once: a name inside a longer one ("CCPA" in "CCPA Regulations") is dropped."""
    spans = sorted(found, key=lambda f: (f[0], -len(f[1])))
    kept: list[tuple[int, str, NameKind]] = []
    for start, name, kind in spans:
        if any(s <= start and start + len(name) <= s + len(n) for s, n, _ in kept):
            continue
        kept.append((start, name, kind))
    return [(name, kind) for _, name, kind in kept]


# The names a jurisdiction also goes by in the texts that govern it: a US statute says "United
# States", an EU act "European Union" or "Union".
_ALSO = {
    "US": ("United States",), "U.S.": ("United States",), "USA": ("United States",),
    "American": ("United States",), "UK": ("United Kingdom",), "U.K.": ("United Kingdom",),
    "British": ("United Kingdom",), "EU": ("European Union", "Union"),
    "European": ("European Union", "Union"), "UAE": ("United Arab Emirates",),
    "NI": ("Northern Ireland",),
}  # fmt: skip
# A law's kind, which says nothing of which law it is: "the NI Police Act" is the Police
# (Northern Ireland) Act 2000 whatever its head word.
_HEAD_TERMS = frozenset(
    tokenize("act acts regulation regulations directive code rules rulebook law ordinance statute")
)
_NAME_WORD = re.compile(r"[\w.()/-]+")
# Words too common among documents' names to name one ("the Agreement", "the Policy").
_GENERIC_NAMES = frozenset(
    ("agreement", "contract", "act", "regulation", "rules", "policy", "guidance")
)


# The most documents one name may scope a question to.
_FEW_EDITIONS = 3
# A name scopes a question when at least this share of the first _NAME_HITS keyword hits of
# the name alone are its documents' paragraphs.
_NAME_HITS = 10
_NAME_SHARE = 0.5


@dataclass(frozen=True)
class _DocumentNames:
    """What the index's documents are called: each one's title, short name, number and aliases
    as one set of terms, and the names one document alone goes by (folded words -> its key)."""

    terms: list[frozenset[str]]
    unique: dict[str, str]
    # Every name, with each document it names (two editions of one title share theirs).
    owners: dict[str, frozenset[str]]
    # The one-word names documents write only in capitals ("FEES", "GEN", "NDA"): a question
    # names one only in capitals. Written in small letters they are words ("what fees may a landlord
    # charge"): of the people's questions here, 36 write "fees" or "funds" in small letters and
    # 5 of them are about ADGM's FEES or FUNDS rulebooks; the acronyms people use are written in
    # capitals (GDPR 115 of 116, NDA 174 of 174).
    capitals: frozenset[str]


_names: weakref.WeakKeyDictionary[IndexView, _DocumentNames] = weakref.WeakKeyDictionary()


def _document_names(index: IndexView) -> _DocumentNames:
    """The index's document names, read once per open index."""
    found = _names.get(index)
    if found is None:
        terms: list[frozenset[str]] = []
        owners: dict[str, set[str]] = {}
        small: set[str] = set()  # names some document writes with small letters
        for document in index.documents():
            said = (document.get("title"), document.get("short_name"), document.get("number"))
            names: set[str] = {name for name in said if name}
            names.update(document.get("aliases") or [])
            # Every name lookups know it by: "17 U.S.C.", "Regulation 2022/2554", "the Bribery
            # Act", a contract's initials and parties (lexkb.core.text.refs.document_names).
            names.update(
                document_names(
                    document["document_key"],
                    document.get("title"),
                    document.get("short_name"),
                    document.get("aliases") or [],
                    document.get("parties") or [],
                )[1:]
            )
            terms.append(frozenset(t for n in names if n for t in tokenize(n)))
            for name in names:
                words = " ".join(_NAME_WORD.findall(name.casefold()))
                if len(words) >= 3 and not words.isdigit() and words not in _GENERIC_NAMES:
                    owners.setdefault(words, set()).add(document["document_key"])
                    if any(c.islower() for c in name):
                        small.add(words)
        unique = {name: next(iter(keys)) for name, keys in owners.items() if len(keys) == 1}
        # A name a few documents share (two editions of one title) names each; one many share
        # ("NDA" for fifty non-disclosure agreements) names a kind of document, not one.
        shared = {n: frozenset(keys) for n, keys in owners.items() if len(keys) <= _FEW_EDITIONS}
        # One word of letters alone: a title set in capitals ("FINANCIAL SERVICES AND MARKETS
        # REGULATIONS 2015") is still written in small letters by those who cite it.
        capitals = frozenset(n for n in owners if n not in small and n.isalpha())
        found = _names[index] = _DocumentNames(terms, unique, shared, capitals)
    return found


def documents_named(index: IndexView, question: str) -> set[str]:
    """Keys of the held documents whose names the question gives, as whole words ("the DMA",
    "COBS", "Police (Northern Ireland) Act 2000")."""
    names, folded = _document_names(index), _folded(question)
    return {key for name, key in names.unique.items() if _gives(names, name, question, folded)}


def _folded(question: str) -> str:
    return " " + " ".join(_NAME_WORD.findall(question.casefold())) + " "


def _gives(names: _DocumentNames, name: str, question: str, folded: str) -> bool:
    """Whether `question` (`folded`: its words folded) gives `name` (folded words) as whole
    words, in capitals where the documents write it only so."""
    if f" {name} " not in folded:
        return False
    return name not in names.capitals or bool(_written(names, name).search(question))


def _written(names: _DocumentNames, name: str) -> re.Pattern[str]:
    """Where `name` is written in a question: in capitals where the documents write it only
    so, else in any case."""
    return _span(name.upper(), False) if name in names.capitals else _span(name)


def scoped(index: IndexView, question: str) -> tuple[list[str], str]:
    """The held documents `question` names (keys, sorted), and the question with those names
    taken out: a question that names a document is asked of that document, and its name is no
    word to match ("What does IFRS S2 require on scenario analysis?" matched the standard's
    front matter, which repeats its name). Nothing is taken out where no document is named, or
    where too little would be left to search."""
    names, folded = _document_names(index), _folded(question)
    owners = names.owners
    # The longest first: "Police (Northern Ireland) Act 2000" before "Police Act 2000".
    said = sorted((n for n in owners if _gives(names, n, question, folded)), key=len, reverse=True)
    spans = {n: _written(names, n) for n in said}
    said = [n for n in said if _distinctive(index, n, owners[n], spans[n].search(question))]
    keys: set[str] = set().union(*(owners[n] for n in said))
    if not said:
        # No title names a document: a party's name may (lexkb.answers.question.party_names).
        taken = [name for name, _ in names_in(question)]
        parties = named_parties(index, question, taken, _PLACE)
        said = [name for name, _ in parties]
        spans = {name: _span(name) for name in said}
        keys = {key for _, found in parties for key in found}
    if not said:
        return [], question
    rest = question
    for name in said:
        rest = spans[name].sub(" ", rest)
    rest = " ".join(rest.split())
    return sorted(keys), rest if len(tokenize(rest)) >= 2 else question


def _span(name: str, ignore_case: bool = True) -> re.Pattern[str]:
    """Where a name (its words) is written in a question, in any spacing, and in any case
    unless `ignore_case` is False."""
    words = [re.escape(w) for w in name.split()]
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(r"(?<![\w])" + r"[^\w]{0,3}".join(words) + r"(?![\w.])", flags)


def asked_of(index: IndexView, question: str, searched: str) -> tuple[list[str], str]:
    """The documents `ask` asks a question of, and the text to search without their names
    (`scoped`; `searched` is the question, or a follow-up read with the one before it). A
    follow-up that names other documents switches to them ("And under the DMA?"): the subject
    is the question before it, the documents are the ones it names now."""
    named, asked = scoped(index, searched)
    now = scoped(index, question)[0] if named and searched != question else []
    return now or named, asked


def cited_names(index: IndexView, keys: list[str]) -> str:
    """Documents as their citations name them ("DORA", "17 U.S.C."), as lexkb.tables names
    them for hits."""
    names = {
        d["document_key"]: short_name(
            d.get("title"), d.get("short_name"), file_key(d.get("source_name") or "")
        )
        for d in index.documents()
    }
    return " and ".join(names.get(key, key) for key in keys)


def _distinctive(
    index: IndexView, name: str, owners: frozenset[str], written: re.Match[str] | None
) -> bool:
    """Whether `name` tells its documents from the rest. A designation with a number ("17
    U.S.C.", "Regulation 2022/2554", "Bribery Act 2010"), written in capitals ("GDPR",
    "DORA") or as a law's name is cited ("Digital Markets Act", which other acts quote more
    often than the act itself says) does; any other must find its documents when searched for alone ("Infomagnet",
    "the AI Act" do; "the Company" or "confidentiality agreement", names some contracts give
    themselves, are words of every contract, and scope nothing)."""
    text = written.group(0) if written else name
    letters = [c for c in text if c.isalpha()]
    if any(c.isdigit() for c in text) or (len(letters) >= 2 and all(c.isupper() for c in letters)):
        return True
    if _NAMED_ACT.fullmatch(text) and not _generic(text):
        return True  # a law's name as laws are cited: "Digital Markets Act", whoever quotes it
    hits = index.search(name, k=_NAME_HITS, mode="keyword", min_relevance=0.0).hits
    return bool(hits) and sum(h.document_key in owners for h in hits) >= _NAME_SHARE * len(hits)


def _a_title_holds(index: IndexView, name: str) -> bool:
    """Whether a document's names hold every word of `name` but its head word and numbers
    ("NI Police Act" -> the Police (Northern Ireland) Act 2000's title holds "northern",
    "ireland", "police")."""
    words = {t for t in tokenize(name) if t not in _HEAD_TERMS and not t[0].isdigit()}
    return bool(words) and any(words <= title for title in _document_names(index).terms)


def _variants(name: str) -> list[str]:
    """`name`, and the same with a jurisdiction's short form written out ("US Code" ->
    "United States Code")."""
    found = [name]
    for short, long_forms in _ALSO.items():
        pattern = rf"(?<![\w.]){re.escape(short)}(?![\w])"
        if re.search(pattern, name):
            found += [re.sub(pattern, form, name) for form in long_forms]
    return found


def known(index: IndexView, name: str) -> bool:
    """Whether the index says `name` or a form of it with a jurisdiction written out."""
    return any(_says(index, v) or _a_title_holds(index, v) for v in _variants(name))


def _says(index: IndexView, name: str) -> bool:
    """Whether the index says `name`: its capitalised words as a term of the index's text,
    headings or document names, or its words side by side there. Names joined by "and" are
    known when one is ("Cabinet Resolution and ADGM Regulations"), and so is a name that holds
    an acronym of NAMES the index says ("FSRA's AML Rules")."""
    parts = re.split(r"\s+and\s+", name)
    if len(parts) > 1:
        return any(_says(index, part) for part in parts)
    vocab = vocabulary(index)
    acronyms = [w for w in re.findall(r"[\w-]+", name) if w in NAMES]
    if any(vocab.knows([w]) for w in acronyms if w != name):
        return True
    words = [w for w in re.split(r"[\s]+", name.replace("’s", "").replace("'s", "")) if w]
    if vocab.knows(words) or vocab.knows([w.rstrip(".") for w in words]):
        return True
    terms = tokenize(name)
    if len(terms) >= 2:
        return all(pair in vocab.bigrams for pair in zip(terms, terms[1:], strict=False))
    return False


def named(index: IndexView, question: str) -> Named:
    """The question's names, split by whether the index knows them."""
    names = tuple(dict.fromkeys(names_in(question)))
    known_names = tuple(n for n, _ in names if known(index, n))
    foreign = tuple(n for n, _ in names if n not in known_names)
    return Named(names, known_names, foreign)


def served(index: IndexView, most: int = 3) -> str:
    """The documents the index serves, as a sentence names them: "AML, MIR, COBS and 37 more"."""
    documents = index.documents()
    shown = [d.get("number") or d.get("short_name") or d["title"] for d in documents[:most]]
    rest = len(documents) - len(shown)
    if rest > 0:
        return f"{', '.join(shown)} and {rest} more"
    return " and ".join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else "".join(shown)
