"""How `ask` reads a question in a conversation: alone, or with the question before it.

A follow-up has no subject of its own: "And for a work made for hire?", "What about Northern
Ireland?", "Does that apply to processors too?". It is read together with the question before
it, which names what it is about. A complete question is read alone, however short: "How long
does copyright last?" after a question on bribery is a new subject, and joining the two sends
the search to the Bribery Act. Earlier rule: any question of four or fewer distinct terms was
joined to the one before, which read every short new question as a follow-up.

What marks a follow-up, in the question's first words or its length:
- it opens as a continuation: "and", "also", "but", "so", "then", "what about", "how about",
  "what if", "same for", "and if";
- or it is short (at most MAX_SHORT_WORDS words) and leans on something said before: a pronoun
  or demonstrative with nothing in the question to point at ("it", "they", "that", "those",
  "such", "the same"), or "too"/"as well"/"instead" at its end.
A question that says the subject changes ("on another matter", "a different thing") is read
alone whatever its opening. Every answer says how it read the question (`Answer.read_as`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

MAX_SHORT_WORDS = 10
_CONTINUATION = re.compile(
    r"^\s*(?:and|also|but|so|then|or|plus|what\s+about|how\s+about|what\s+if|and\s+if|"
    r"same\s+(?:for|with|question)|in\s+that\s+case|if\s+so|otherwise)\b",
    re.I,
)
_LEANING = re.compile(
    r"\b(?:it|its|they|them|their|that|this|those|these|such|he|she|him|her|the\s+same)\b"
    r"|\b(?:too|as\s+well|instead|either)\s*[?.!]*\s*$",
    re.I,
)


# Words that say the subject changes ("Also, on another matter - ...", "One more, different
# thing: ..."): whatever the opening, the question is read alone.
_NEW_SUBJECT = re.compile(
    r"\b(?:on\s+(?:an)?other\s+(?:matter|note|subject|topic|point)|(?:a\s+)?different\s+"
    r"(?:thing|matter|question|subject|topic|point)|(?:a\s+|one\s+)?new\s+(?:question|subject|"
    r"topic)|unrelated(?:ly)?|separately|changing\s+(?:the\s+)?(?:subject|topic))\b",
    re.I,
)


def is_follow_up(question: str) -> bool:
    """True when `question` has no subject of its own and needs the question before it."""
    if _NEW_SUBJECT.search(question[:80]):
        return False
    if _CONTINUATION.match(question):
        return True
    words = re.findall(r"[\w'’-]+", question)
    return len(words) <= MAX_SHORT_WORDS and bool(_LEANING.search(question))


def read_as(question: str, turns: Sequence[Mapping[str, object]]) -> tuple[str, str]:
    """(the text to search, how the question was read, in words). A follow-up is searched
    with the question before it; anything else alone."""
    previous = str(turns[-1].get("question", "") or "").strip() if turns else ""
    if previous and is_follow_up(question):
        return (
            f"{previous} {question}",
            f"a follow-up, read with the question before it: {previous!r} + {question!r}",
        )
    if previous:
        return question, "a question of its own, read alone (it does not lean on the one before)"
    return question, "read alone"
