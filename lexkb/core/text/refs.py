"""Normal form of paragraph references, shared by the build (stored keys) and `Index.get`.

People write the same citation many ways ("Art. 6(1)", "article 6 (1)", "Article 6(1)"). Both the
stored ref and the user's text go through `normalize_ref`, so lookups compare like with like.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from lexkb.core.text.popular_names import POPULAR_NAMES

_PREFIXES = (
    (re.compile(r"^(?:art(?:icle)?s?\.?)(?=\d)"), "article"),
    (re.compile(r"^(?:rec(?:ital)?s?\.?)(?=\d)"), "recital"),
    (re.compile(r"^(?:para(?:graph)?s?\.?)(?=\d)"), "paragraph"),
    (re.compile(r"^(?:sec(?:tion)?s?\.?)(?=\d)"), "section"),
    (re.compile(r"^(?:rules?|r\.)(?=\d)"), ""),
    (re.compile(r"^§+"), "§"),
)


def normalize_ref(ref: str) -> str:
    """Case-, space- and abbreviation-insensitive key of a reference ("Art. 6 (1)" -> "article6(1)")."""
    text = unicodedata.normalize("NFKC", ref).casefold()
    text = re.sub(r"\s+", "", text).rstrip(".:")
    for pattern, replacement in _PREFIXES:
        text, count = pattern.subn(replacement, text, count=1)
        if count:
            break
    return text


# Words that name a numbered unit. Articles, recitals, annexes and the like are separate number
# spaces within one act ("Article 5" is not "Recital 5"), so they stay in the address; "Rule",
# "Section", "paragraph" and "point" are ways of writing the same dotted number and are dropped.
_KEPT_KINDS = {
    "article": "article",
    "art": "article",
    "recital": "recital",
    "part": "part",
    "chapter": "chapter",
    "annex": "annex",
    "appendix": "app",
    "app": "app",
    "schedule": "schedule",
    "title": "title",
    # A paragraph placed only by position ("Section 4 ¶ 2", "p. 11 ¶ 9") is not numbered 2.
    "¶": "¶",
}
_DROPPED_KINDS = {
    "rule", "rules", "section", "sections", "sec", "s", "paragraph", "para", "§", "clause", "cl",
}  # fmt: skip
# Leading units that group numbers without being part of how they are cited: FSMR section 58
# sits in "Part 6.Chapter 1.58.", but people write "section 58".
CONTAINER_ATOMS = ("part", "chapter", "title", "app")
# The build marks the second "4.3" of a document as "4.3 [2]"; it is still cited as "4.3".
_DUPLICATE_SUFFIX = re.compile(r"\s\[\d+\]$")
_ATOM = re.compile(r"([a-z§¶]+)\s*(\d+[a-z]{0,2})\b|(\d+[a-z]{0,2})\b|\(([a-z0-9]{1,6})\)|([a-z]+)")
# The US Code's title before a section number names the code, not a unit: "17 U.S.C. 512(c)".
US_CODE = re.compile(r"\b(\d{1,2})\s*U\.?\s?S\.?\s?C\.?(?:\s?A\.?)?(?:\s*§+|\s+(?=\d))\s*", re.I)


def ref_address(ref: str) -> tuple[str, ...]:
    """A reference as the sequence of units it names, for matching citations to paragraphs.

    "Article 6(1)" -> ("article6", "1"); "Part 6.Chapter 1.58.(2)" -> ("part6", "chapter1", "58",
    "2"); "Rule 9.3.1B" -> ("9", "3", "1b"); "APP4.A4.3" -> ("app4", "a4", "3").
    """
    text = _DUPLICATE_SUFFIX.sub("", unicodedata.normalize("NFKC", ref))
    text = US_CODE.sub("§ ", text).casefold()
    atoms: list[str] = []
    for word, number, bare, point, plain in _ATOM.findall(text):
        if number:
            kind = _KEPT_KINDS.get(word.rstrip("s"), _KEPT_KINDS.get(word))
            if kind is not None:
                atoms.append(kind + number)
            elif word in _DROPPED_KINDS or word.rstrip("s") in _DROPPED_KINDS:
                atoms.append(number)
            else:
                atoms.append(word + number)
        elif bare or point:
            atoms.append(bare or point)
        elif len(plain) == 1 and atoms and atoms[-1].isdigit():
            atoms[-1] += plain  # "15.11.A.2" is rule 15.11A.2
        elif plain not in _DROPPED_KINDS and plain.rstrip("s") not in _DROPPED_KINDS:
            atoms.append(plain)
    return tuple(atoms)


def core_address(address: tuple[str, ...]) -> tuple[str, ...]:
    """The address without its leading grouping units (see CONTAINER_ATOMS)."""
    start = 0
    while start < len(address) - 1 and address[start].startswith(CONTAINER_ATOMS):
        if not re.fullmatch(r"[a-z]+\d+[a-z]{0,2}", address[start]):
            break
        start += 1
    return address[start:]


def title_code(title: str | None) -> tuple[str, str] | None:
    """The series and number a standard's title starts with ("LSA 230 ..." -> ("LSA", "230"),
    "IFRS S2 ..." -> ("IFRS", "S2"))."""
    code = re.match(r"^([A-Za-z]{2,8})\s*(\d+[A-Za-z]?|(?<=\s)[A-Z]\d+)\b", title or "")
    return (code.group(1), code.group(2)) if code else None


# A long title's own name for the act, in parentheses: "... repealing Directive 95/46/EC
# (General Data Protection Regulation)". Two to seven capitalised words, so "(EU)" and
# "(Text with EEA relevance)" are not names.
_NAME_IN_TITLE = re.compile(r"\(((?:[A-Z][\w'-]*\s+){1,6}[A-Z][\w'-]*)\)")
LONG_TITLE = 100


def title_name(title: str | None) -> str | None:
    """The name a long official title gives the act in parentheses, else None."""
    if not title or len(title) <= LONG_TITLE:
        return None
    found = _NAME_IN_TITLE.findall(title)
    return found[-1] if found else None


def citation_name(title: str | None) -> str | None:
    """The name a citation gives a document with a long official title: the name the title
    gives the act ("General Data Protection Regulation"), else the name the act is known by
    (lexkb.core.text.popular_names: "DORA"), else its designation ("Regulation (EU)
    2023/956"); None for a short title, which is cited as it stands. A 250-character formal
    title in every citation is one nobody writes."""
    if found := title_name(title):
        return found
    if not title or len(title) <= LONG_TITLE:
        return None
    if designation := eu_designation(" ".join(title.split())):
        return next(iter(POPULAR_NAMES.get(designation, ())), designation)
    return None


# A standard's code at the start of its title: "IFRS 16 Leases", "LSA 230 Audit Documentation".
_TITLE_SERIES = re.compile(r"^([A-Z]{2,8})\s*(\d+[A-Za-z]?)\b")


def short_name(title: str | None, given: str | None = None, key: str = "") -> str:
    """The name a citation gives a document: the short name its catalog gives (`given`), else
    the name its family cites it by (a long title's name for the act: "DORA"; the code a
    standard's title starts with or spells out: "IFRS 16"; "17 U.S.C."; an Act's short title;
    the short form a title gives itself: "AML Policy"; a contract's initials: "NDA"), else its
    title, else its key."""
    if given:
        return given
    title = " ".join((title or "").split())
    if name := citation_name(title):
        return name
    if code := _TITLE_SERIES.match(title):
        return f"{code.group(1)} {code.group(2)}"
    if us := _US_TITLE.match(title) or _US_FILE.match(key):
        return f"{int(us.group(1))} U.S.C."
    if act := _UK_ACT.match(title):
        return act.group(1)
    for pattern, series in _STANDARD_WORDS:
        if standard := pattern.search(title):
            return f"{series} {standard.group(1)}"
    return next(iter(_given_forms(title) + _initials(title)), None) or title or key


# Series whose numbered titles are standards: "IFRS 16 Leases", "ISA 230 ...", "ISO 27001".
_STANDARD_SERIES = {
    "IFRS",
    "IAS",
    "IFRIC",
    "SIC",
    "ISA",
    "ISAE",
    "ISRE",
    "ISQM",
    "IPSAS",
    "ISO",
    "IEC",
}
_UK_CHAPTER = re.compile(r"\d{4} c\. \d{1,4}")
_POLICY = re.compile(r"\bpolic(?:y|ies)\b", re.IGNORECASE)


def title_type(title: str | None, key: str = "", designations: Sequence[str] = ()) -> str | None:
    """What a document is, read from how its family titles it: the kind of EU act its title
    opens with ("regulation"), a UK Act ("act": its short title, or a chapter number among the
    `designations` it prints), the US Code ("code"), a standard, a policy; None otherwise.
    Contracts are told by their text (transforms.structure.contracts)."""
    title = " ".join((title or "").split())
    if act := _EU_ACT.match(title):
        return act.group(1).casefold()
    if _UK_ACT.match(title) or any(_UK_CHAPTER.fullmatch(d) for d in designations):
        return "act"
    if _US_TITLE.match(title) or _US_FILE.match(key):
        return "code"
    series = _TITLE_SERIES.match(title)
    if series and series.group(1) in _STANDARD_SERIES:
        return "standard"
    if any(pattern.search(title) for pattern, _ in _STANDARD_WORDS):
        return "standard"
    return "policy" if _POLICY.search(title) else None


def eu_designation(title: str) -> str | None:
    """The designation an EU act's title opens with, as people cite it: "REGULATION (EU)
    2022/2554 OF THE ..." is "Regulation (EU) 2022/2554" (the first one: those after it are
    acts it amends or repeals)."""
    if not (act := _EU_ACT.search(title)):
        return None
    kind, series, number = act.group(1).capitalize(), act.group(2).upper(), act.group(4)
    series = "EU, Euratom" if series.startswith("EU,") else series
    return f"{kind} ({series}) {'No ' if act.group(3) else ''}{number}"


def document_names(
    key: str,
    title: str | None,
    short_name: str | None,
    aliases: Sequence[str] = (),
    parties: Sequence[str] = (),
) -> list[str]:
    """The names a document goes by: its key, title, short name and aliases, plus the code a
    standard's title starts with ("LSA 230 Audit Documentation" -> "LSA 230") or holds ("Guidance
    Note GN-7: ..." -> "GN-7"), and a contract's by its parties (party_names)."""
    names = [key, title or "", short_name or "", *aliases]
    for name in list(names):
        # "Fund Rules (FUNDS)" is also cited as "Fund Rules" and as "FUNDS".
        if match := re.fullmatch(r"(.+?)\s*\(([A-Z][A-Za-z]{1,7})\)", name.strip()):
            names += [match.group(1), match.group(2)]
    if code := title_code(title):
        names.append(" ".join(code))
    if titled := title_name(title):
        # ... and by its initials: "General Data Protection Regulation" is the "GDPR".
        words = titled.split()
        names += [titled, "".join(w[0] for w in words)] if len(words) >= 3 else [titled]
    # A code inside the title names the document too: "Guidance Note GN-7: Reconciliation".
    names += _TITLE_CODE.findall(title or "")
    names += cited_names(key, title)
    names += party_names(parties, title)
    return [name for name in dict.fromkeys(" ".join(n.split()) for n in names) if name]


# A company's legal form, which people drop when they name a contract by its party ("the Acme
# agreement" for Acme Corporation's).
_LEGAL_FORM = re.compile(
    r"[,\s]+(?:Inc|Incorporated|LLC|L\.L\.C|Ltd|Limited|L\.P|LP|LLP|Corp|Corporation|Co|Company|"
    r"N\.A|S\.A|GmbH|plc|B\.V|AG|SE|PLC)\.?$",
    re.IGNORECASE,
)


def party_names(parties: Sequence[str], title: str | None) -> list[str]:
    """A contract's names by its parties, as people call it: a party's name with and without its
    legal form ("Acme Corporation", "Acme"), and each with what the contract calls itself ("the
    Acme MSA", "the Acme agreement"). A name two contracts share names neither alone (the
    lookup asks which)."""
    title = " ".join((title or "").split())
    selves = [title, *_acronym_forms(title)] if _CONTRACT_TITLE.match(title) else []
    if title and not selves and title.isupper():
        # "MASTER SERVICES AGREEMENT": the same rules, read in title case.
        cased = title.title()
        selves = [cased, *_acronym_forms(cased)] if _CONTRACT_TITLE.match(cased) else []
    names: list[str] = []
    for party in parties:
        short = _LEGAL_FORM.sub("", party).strip(" ,.")
        words = short.split()
        # "Prefect Technologies" is "Prefect": the words after a distinctive first one say
        # only what trade it is in.
        if len(words) > 1 and all(w.casefold() in _TRADE_WORDS for w in words[1:]):
            short = words[0]
        if len(short) < 4:
            short = party
        names += [party, short, *(f"{short} {self}" for self in selves if self)]
    # A few letters ("AB") name too much to name a contract.
    return [name for name in dict.fromkeys(names) if len(name) >= 4]


_TRADE_WORDS = {
    "technologies", "technology", "labs", "laboratories", "group", "holdings", "systems",
    "solutions", "software", "services", "international", "partners", "networks", "media",
    "enterprises", "industries", "global", "digital", "consulting", "ventures",
}  # fmt: skip


_TITLE_CODE = re.compile(r"\b[A-Z]{2,6}-\d{1,4}[A-Za-z]?\b")
# How each family's publisher designates a text, and how people cite it by that designation.
# EU: "REGULATION (EU) 2022/2554 OF THE EUROPEAN PARLIAMENT ..." is "Regulation (EU) 2022/2554";
# the first designation is the act's own (those after it are acts it amends or repeals).
_EU_ACT = re.compile(
    r"\b(regulation|directive|decision)\s*\((eu|ec|eec|eu,\s*euratom)\)\s*(no\s*)?(\d{2,4}/\d{1,4})",
    re.I,
)
# An acronym a long title gives the act in parentheses: "... (DORA)"; not "(EU)" or "(EEA)".
_ACRONYM = re.compile(r"\(([A-Z]{3,8})\)")
_NOT_ACRONYMS = {"EEA", "EEC", "EFTA", "ECB", "ESMA", "EBA", "EIOPA"}
# UK: "Bribery Act 2010", "Police (Northern Ireland) Act 2000" (the short title an Act gives itself).
_UK_ACT = re.compile(
    r"^(?:(?i:the)\s+)?([A-Z(][\w’'()-]*\s+(?:(?:[A-Z(][\w’'()-]*|and|of|for|the|to|on|in)\s+)*?"
    r"Act\s+\d{4})\b"
)
# US Code: "Title 17—Copyrights" and uscode.house.gov's file names ("usc17", "usc05a") are
# cited as "17 U.S.C.".
_US_TITLE = re.compile(r"^title\s+(\d{1,2})\b", re.I)
_US_FILE = re.compile(r"^usc(\d{1,2})a?$", re.I)
# Standards designated in words: "International Financial Reporting Standard 16" is IFRS 16.
_STANDARD_WORDS = (
    (re.compile(r"international financial reporting standard\s+(\d{1,3})\b", re.I), "IFRS"),
    (re.compile(r"international accounting standard\s+(\d{1,3})\b", re.I), "IAS"),
    (re.compile(r"international standard on auditing\s+(\d{3})\b", re.I), "ISA"),
)


# A contract names itself by its title's last word ("this Agreement").
_CONTRACT_TITLE = re.compile(
    r"^(?:[A-Z][\w'-]*\s+){1,6}(Agreement|Contract|Deed|Lease|Licen[cs]e|Memorandum)$"
)
_MINOR = {"of", "and", "the", "for", "on", "in", "to"}


def _acronym_forms(title: str) -> list[str]:
    """Short forms a title gives itself (_given_forms), and a contract's initials and self-name
    ("Non-Disclosure Agreement" -> "NDA", "Agreement")."""
    forms = _given_forms(title)
    if contract := _CONTRACT_TITLE.match(title):
        forms += [*_initials(title), contract.group(1)]
    return forms


def _initials(title: str) -> list[str]:
    """A contract's initials, as people name it ("Non-Disclosure Agreement" -> "NDA"), where
    its title has three words or more to make them."""
    if not _CONTRACT_TITLE.match(title):
        return []
    words = [p for w in title.split() if w.lower() not in _MINOR for p in w.split("-") if p]
    return ["".join(w[0].upper() for w in words)] if len(words) >= 3 else []


def _given_forms(title: str) -> list[str]:
    """The short forms made by the acronym a title puts in parentheses standing for the words
    before it ("Anti-Money Laundering (AML) Policy" -> "AML Policy")."""
    forms: list[str] = []
    for match in re.finditer(r"\(([A-Z]{2,8})\)", title):
        acronym, before = match.group(1), title[: match.start()].split()
        for count in range(1, min(len(before), len(acronym)) + 1):
            words = before[-count:]
            initials = "".join(p[0] for w in words for p in w.split("-") if p)
            if initials.upper() == acronym:
                rest = title[match.end() :].strip()
                forms.append(" ".join([*before[:-count], acronym, rest]).strip())
                if rest:
                    forms.append(f"{acronym} {rest}")
                break
    return forms


def cited_names(key: str, title: str | None) -> list[str]:
    """The names people cite a document by, read from its title (and a US Code file's name) by
    each family's rules: "Regulation (EU) 2022/2554" and an acronym the title gives ("DORA"),
    "Bribery Act 2010", "17 U.S.C." and "Title 17", "IFRS 16"."""
    title = " ".join((title or "").split())
    names: list[str] = []
    if designation := eu_designation(title):
        known = [*POPULAR_NAMES.get(designation, ()), *filter(None, [title_name(title)])]
        names += [designation, *POPULAR_NAMES.get(designation, ())]
        # An act's name as an "Act" is said with the Union's too: "the EU AI Act".
        names += [f"EU {name}" for name in known if name.endswith(" Act")]
        # Its number alone, and its kind and number without the series, as people write them
        # ("2022/2554", "Regulation 2022/2554").
        kind, number = designation.split()[0], designation.split()[-1]
        names += [number, f"{kind} {number}"]
    if len(title) > LONG_TITLE:
        names += [a for a in _ACRONYM.findall(title) if a not in _NOT_ACRONYMS]
    if act := _UK_ACT.match(title):
        # "the Bribery Act" is the Bribery Act 2010 where no other year is meant.
        names += [act.group(1), re.sub(r"\s+\d{4}$", "", act.group(1))]
        # "Police (Northern Ireland) Act 2000" is also written without its place: "the Police
        # Act 2000" (with its year: without it, another Police Act may be meant).
        if (plain := re.sub(r"\s*\([^)]*\)", "", act.group(1))) != act.group(1):
            names.append(plain)
    if us := _US_TITLE.match(title) or _US_FILE.match(key):
        title_number = int(us.group(1))
        names += [
            f"{title_number} U.S.C.",
            f"Title {title_number}",
            f"Title {title_number}, United States Code",
        ]
        # "Title 17—Copyrights" is also "Copyrights".
        names += [part.strip() for part in re.findall(r"[—–-]\s*(.+)$", title)[:1]]
    names += _acronym_forms(title)
    for pattern, series in _STANDARD_WORDS:
        if standard := pattern.search(title):
            names.append(f"{series} {standard.group(1)}")
    return list(dict.fromkeys(names))
