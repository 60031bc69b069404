"""The parties a contract's signature block names: each entity that signs.

A preamble names the parties once, in a sentence whose layout varies without end ("X, a
Michigan insurance corporation (MICOA) and Y ... agree as follows" names no "between"). The
signature block is set the same way in nearly every contract: after "IN WITNESS WHEREOF", each
party's name on a line of its own, then "By:" and the signatory's name and title. So the names
read there complete the preamble's: a party it missed, or an affiliate that joins to sign.

A line counts as a signing party's name when the next line starts a signature ("By:",
"/s/"), and it reads as a name: no colon inside, not a signatory's "Name:" or "Title:", not a
page's label in brackets, not a bare role ("CONSULTANT", "the Company"), and either a
company's legal form ends it or it is in capitals or title case of two words or more.
"""

from __future__ import annotations

import re

# The sentence that opens a signature block.
_WITNESS = re.compile(r"\bin\s+witness\s+where(?:of|to)\b", re.IGNORECASE)
# How many texts after it the block may run: a signature page of several parties, each with
# its name, signature, printed name and title.
_BLOCK_TEXTS = 40
# A line that starts a signature.
_SIGNS = re.compile(r"^\s*(?:by\s*[:/_]|by\s+/s/|/s/|by\s*$|by\s+[A-Z])", re.IGNORECASE)
# What a party's line may open with before its name: "APPROVED FOR ADAMS GOLF, LTD.",
# "AGREED AND ACCEPTED BY: ...".
_LEAD = re.compile(
    r"^\s*(?:(?:approved|agreed(?:\s+(?:to|and\s+accepted))?|accepted|acknowledged)"
    r"(?:\s+(?:for|by|on\s+behalf\s+of))?|for\s+and\s+on\s+behalf\s+of|on\s+behalf\s+of|for)"
    r"\s*:?\s+",
    re.IGNORECASE,
)
# The capacity a party signs in, after its name: ", as guarantor", ", its General Partner".
_CAPACITY = re.compile(r",\s*(?:as|its|in\s+its)\s.*$", re.IGNORECASE)
# A company's legal forms, once: what ends a signing company's name, and what two spellings of
# one party's name may differ by.
_LEGAL_FORMS = (
    r"Inc|Incorporated|Corp|Corporation|Company|Co|LLC|L\.L\.C|Ltd|Limited|L\.P|LP|LLP|N\.A"
    r"|S\.A|S\.A\.S|S\.R\.L|GmbH|AG|SE|plc|B\.V|N\.V|Pty\s+Ltd"
)
# What ends a signing party's name: a legal form, or the kind of body it is.
_LEGAL_FORM = re.compile(
    rf",?\s+(?:{_LEGAL_FORMS}|Trust|Bank|Association|Partnership|Fund)\.?$", re.IGNORECASE
)
# Lines of a signature that are not a party: the signatory's particulars, a page's label.
_NOT_A_NAME = re.compile(
    r"^\s*(?:name|title|its|date|dated|address|attn|attention|signature|witness|print(?:ed)?"
    r"|per|email|e-mail|tel|phone|fax|notary|\[|\(|page\b|/s/)",
    re.IGNORECASE,
)
_MINOR = {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "the", "to", "&"}


def signing_parties(texts: list[str]) -> list[str]:
    """The names of the entities that sign, in the order the block gives them (at most six)."""
    start = max((n for n, text in enumerate(texts) if _WITNESS.search(text)), default=None)
    if start is None:
        return []
    block = [" ".join(text.split()) for text in texts[start + 1 : start + 1 + _BLOCK_TEXTS]]
    names: list[str] = []
    for line, after in zip(block, block[1:], strict=False):
        if not _SIGNS.match(after):
            continue
        name = _name(line)
        if name and name.casefold() not in {n.casefold() for n in names}:
            names.append(name)
    return names[:6]


def _name(line: str) -> str | None:
    """The party a line before a signature names, or None where it names none."""
    line = _CAPACITY.sub("", _LEAD.sub("", line)).strip(" ,;:-")
    if not 3 <= len(line) <= 90 or ":" in line or _NOT_A_NAME.match(line):
        return None
    if re.match(r"(?:a|an)\s", line):  # a description: "a Delaware corporation"
        return None
    if _LEGAL_FORM.search(line):
        return line
    words = [w for w in line.split() if w.casefold() not in _MINOR]
    if len(words) < 2 or not all(w[:1].isupper() or w[:1].isdigit() for w in words):
        return None
    return line if line.isupper() or line.istitle() else None


_FORM_WORDS = re.compile(rf"\b(?:{_LEGAL_FORMS}|the)\b\.?", re.IGNORECASE)


def same_entity(one: str, other: str) -> bool:
    """Whether two names name one party: the words of one, legal forms aside, hold the other's
    ("ADAMS GOLF, LTD." and "Adams Golf Ltd")."""
    a, b = _words(one), _words(other)
    return bool(a and b) and (a <= b or b <= a)


def _words(name: str) -> set[str]:
    """A name's words, legal forms aside, a plural's "s" dropped ("Naked Brands Group")."""
    words = re.findall(r"[a-z0-9]+", _FORM_WORDS.sub(" ", name.casefold()))
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words}


def with_signing_parties(named: list[str], texts: list[str]) -> list[str]:
    """The preamble's parties (`named`), then each signing party none of them names (at most
    six in all)."""
    parties = list(named)
    for signer in signing_parties(texts):
        if not any(same_entity(signer, party) for party in parties):
            parties.append(signer)
    return parties[:6]
