"""Names a question gives that only a document's own text says: a contract's parties ("Flix
Brewhouse", "Data Boiler", "the GSA"), a programme's name ("PROTECTOR"), a party's initials.

People name the other side of a contract, not its title: "How long must we keep Excelerate's
strategies confidential?" is asked of the NDA with Excelerate Inc. Reading parties from a
contract's first lines at build time misses many ("the Discloser" and "the Recipient" where the
preamble names Flix Entertainment), so the question's capitalised words are looked up in the
index's own words instead: a name scopes a question to the documents whose paragraphs hold all
its words, when at most a few documents do and each either opens with them (its first
paragraphs: title, parties) or says them again and again (a defined party, "VIP", "the GSA").
Of the people's train and tune answerable questions (benchmarks/questions/people), 517 of
1,615 are scoped by a party's name this way (stop 75), 500 of them to the document that
answers; the search (`ranker.first_search`) then puts a right paragraph among the first twenty
for 1,195 of the 1,484 train questions, against 1,116 when the names were words to match.

Laws, regulators and jurisdictions are read by lexkb.answers.question.named_laws, and a place
("Swiss", "Dubai") is no party: neither scopes a question here.
"""

from __future__ import annotations

import re

from lexkb.answers.index_view import IndexView
from lexkb.answers.question.scope import OPENERS
from lexkb.core.text.tokenize import tokenize

# A run of capitalised words, joined by the small words names hold ("Bank of America",
# "Procter & Gamble"); a possessive ends a word ("Excelerate's").
_RUN = re.compile(
    r"[A-Z][\w&-]*(?:['’]s)?(?:\s+(?:(?:of|and|&|for|the)\s+)?[A-Z][\w&-]*(?:['’]s)?)*"
)
_POSSESSIVE = re.compile(r"['’]s\b")
# Cities people say their firms are in; like a jurisdiction, a place is no party, though a
# contract's first lines give its parties' addresses ("Geneva", "London").
_CITY_NAMES = (
    "London Paris Brussels Geneva Zurich Frankfurt Luxembourg Amsterdam Dublin Milan Madrid "
    "Abu Dhabi Riyadh Doha Manama Cairo Mumbai Delhi Beijing Shanghai Tokyo Seoul Sydney "
    "Melbourne Toronto Chicago Boston Houston Atlanta Seattle San Francisco Los Angeles"
)
_CITIES = frozenset(_CITY_NAMES.split())
# A name written in more documents than this names a kind of thing, not a party.
_MOST_DOCUMENTS = 3
# A document names a party in its first paragraphs (title, parties), or says it this often.
_OPENING = 3
_REPEATED = 3


def _words(run: str) -> list[str]:
    """The run's words without the ones that only open the sentence ("Does the FreeCook")."""
    words = _POSSESSIVE.sub("", run).split()
    while words and words[0] in OPENERS:
        words = words[1:]
    return words


def named_parties(
    index: IndexView, question: str, taken: list[str], places: re.Pattern[str]
) -> list[tuple[str, list[str]]]:
    """Each name `question` gives that its documents' own text says, as written, with the keys
    of the documents it scopes to. `taken`: names read already as laws, regulators or
    jurisdictions; `places`: what matches a jurisdiction's name."""
    found: list[tuple[str, list[str]]] = []
    for match in _RUN.finditer(question):
        words = _words(match.group(0))
        name = " ".join(words)
        if not name or any(name in t or t in name for t in taken):
            continue
        if all(places.fullmatch(w) or w in _CITIES for w in words) or not tokenize(name):
            continue
        holding = index.documents_holding(name)
        if not holding or len(holding) > _MOST_DOCUMENTS:
            continue
        keys = sorted(
            h.document_key for h in holding if h.first < _OPENING or h.paragraphs >= _REPEATED
        )
        if keys:
            found.append((name, keys))
    return found
