"""The one tokenizer used at build time and at query time.

BM25 only works if the index and the query see the same terms, so both sides import this module
and the snapshot records `TOKENIZER_VERSION`; the query module refuses a snapshot built with
another version. Legal references ("6(1)(a)", "18.8.2", "A12") are kept whole as extra terms,
because a generic word splitter turns them into digits that match every numbered paragraph.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

TOKENIZER_VERSION = "lexkb-words-refs-snowball-v1"

# A reference with bracketed parts ("6(1)(a)", "512(c)(1)"), a dotted number ("18.8.2", "9.3.1b"),
# or a run of letters and digits. The two compound forms come first so they win over plain words.
_TERM = re.compile(
    r"\d+(?:\.\d+)*[a-z]?(?:\([0-9a-z]{1,5}\))+"
    r"|\d+(?:\.\d+)+[a-z]?"
    r"|[^\W_]+"
)
_COMPOUND_HEAD = re.compile(r"^\d+")

# Function words that carry no topical signal in regulatory English. Modal verbs such as "must"
# and "shall" are kept out of this list on purpose: they mark obligations users search for.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves
    """.split()  # noqa: SIM905
)

_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer.stemWord(word)


def normalize_text(text: str) -> str:
    """Fold compatibility characters and case so "ﬁ", "Ｒule" and "RULE" index alike."""
    return unicodedata.normalize("NFKC", text).casefold()


def tokenize(text: str) -> list[str]:
    """Terms of one text, in order, duplicates kept (BM25 needs term frequencies)."""
    terms: list[str] = []
    for match in _TERM.finditer(normalize_text(text)):
        token = match.group(0)
        if token[0].isdigit() and ("." in token or "(" in token):
            terms.append(token)
            head = _COMPOUND_HEAD.match(token)
            if head and len(head.group(0)) > 1:
                terms.append(head.group(0))
            continue
        if len(token) < 2 or token in STOPWORDS:
            continue
        terms.append(_stem(token) if token.isalpha() else token)
    return terms
