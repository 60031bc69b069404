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
def _terms_of(token: str) -> tuple[str, ...]:
    """The terms one matched token stands for: a compound reference and its leading number
    (when longer than a digit), a stemmed word, a word kept as it is, or nothing (a stopword or a
    single character). Cached: a query's tokens recur, and a dict hit costs less than the checks."""
    if token[0].isdigit() and ("." in token or "(" in token):
        head = _COMPOUND_HEAD.match(token)
        return (token, head.group(0)) if head and len(head.group(0)) > 1 else (token,)
    if len(token) < 2 or token in STOPWORDS:
        return ()
    return (_stemmer.stemWord(token) if token.isalpha() else token,)


def normalize_text(text: str) -> str:
    """Fold compatibility characters and case so "ﬁ", "Ｒule" and "RULE" index alike."""
    return unicodedata.normalize("NFKC", text).casefold()


def tokenize(text: str) -> list[str]:
    """Terms of one text, in order, duplicates kept (BM25 needs term frequencies)."""
    terms: list[str] = []
    for token in _TERM.findall(normalize_text(text)):
        terms.extend(_terms_of(token))
    return terms
