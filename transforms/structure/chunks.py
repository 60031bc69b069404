"""Recovered units -> the chunk rows a snapshot stores, at four levels.

- `paragraph`: one per citable unit ("Article 6(1)", "A12", "§ 103(b)"); its ref is unique in the
  document. This is what search returns by default.
- `section`: one per section that holds paragraphs directly (an article, a rule section), with
  the heading and all its paragraphs: what a reader gets when they ask for "Article 6".
- `part`: a long paragraph cut at sentence boundaries, keeping the paragraph's ref, with the
  paragraph as `parent_chunk_id`; embedding models read only the first few hundred tokens.
- `note`: a footnote that a rendering printed inline (EU acts cite the Official Journal that way),
  cut out of the paragraph text and kept with the paragraph as parent.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from transforms.structure.ids import chunk_id, sha256_text
from transforms.structure.tree import Section

PART_CHARS = 1500
FRAGMENT_WORDS = 4

# An inline footnote glued to the word it annotates ("of the CouncilDirective 95/46/EC ... (OJ L
# 281, 23.11.1995, p. 31).") runs from the glued capital to the Official Journal citation.
_OJ_NOTE = re.compile(
    r"(?<=[a-z)])(?=[A-Z])([^\n]{10,600}?"
    r"\((?:OJ\s[A-Z]\s\d+,\s[\d.]+,\sp\.\s?\d+|see page \d+ of this Official Journal)\)\.)"
)
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[(A-Z0-9‘“])|\n+")


@dataclass
class Paragraph:
    ref: str | None
    section: Section | None
    page: int | None
    text: str
    notes: list[str] = field(default_factory=list)


def split_notes(text: str) -> tuple[str, list[str]]:
    notes = [match.group(1) for match in _OJ_NOTE.finditer(text)]
    if not notes:
        return text, []
    cleaned = _OJ_NOTE.sub("", text)
    # "...of the Council(OJ ...)." leaves "Council." or "Council ." behind: keep one sentence end.
    cleaned = re.sub(r"\.\.(?=\s|$)", ".", cleaned)
    # A note that ended a line leaves its sentence broken there: "the Council\nseeks to".
    cleaned = re.sub(r"(?<=[A-Za-z,])\n(?=[a-z])", " ", cleaned)
    return re.sub(r"[ \t]{2,}", " ", cleaned), notes


def merge_fragments(paragraphs: list[Paragraph]) -> list[Paragraph]:
    """A few stray words that are not a numbered unit of their own (a line the layout pass cut
    off, an orphan list tail) belong to the paragraph before them in the same section."""
    merged: list[Paragraph] = []
    for paragraph in paragraphs:
        previous = merged[-1] if merged else None
        own_unit = paragraph.ref is not None and (
            paragraph.section is None
            or paragraph.ref not in (paragraph.section.label, paragraph.section.number)
        )
        if (
            previous is not None
            and not own_unit
            and previous.section is paragraph.section
            and len(paragraph.text.split()) < FRAGMENT_WORDS
        ):
            previous.text = f"{previous.text}\n{paragraph.text}"
            previous.notes.extend(paragraph.notes)
            continue
        merged.append(paragraph)
    return merged


def split_parts(text: str, limit: int = PART_CHARS) -> list[str]:
    """Consecutive sentences packed up to `limit` characters; one longer sentence stays whole."""
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    current = ""
    for sentence in (s.strip() for s in _SENTENCE_END.split(text)):
        if not sentence:
            continue
        if current and len(current) + 1 + len(sentence) > limit:
            parts.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        parts.append(current)
    return parts


def unique_refs(refs: Sequence[str | None]) -> list[str | None]:
    """Refs must be unique per document; a repeated one is qualified with its occurrence."""
    seen: Counter[str] = Counter()
    unique: list[str | None] = []
    for ref in refs:
        if ref is None:
            unique.append(None)
            continue
        seen[ref] += 1
        unique.append(ref if seen[ref] == 1 else f"{ref} [{seen[ref]}]")
    return unique


def _read_once(paragraphs: list[Paragraph]) -> list[str]:
    """The texts a section chunk joins, each once: a unit printed whole with its points (the US
    Code's "(c) Exceptions.—" has no words before its paragraphs) already holds the texts of
    the units that follow it, which are units of their own too."""
    texts: list[str] = []
    holder: Paragraph | None = None
    for paragraph in paragraphs:
        inside = (
            holder is not None
            and bool(holder.ref and paragraph.ref and paragraph.ref.startswith(holder.ref))
            and paragraph.text in holder.text
        )
        if not inside:
            texts.append(paragraph.text)
            holder = paragraph
    return texts


class _Rows:
    def __init__(self, doc_id: str, document_key: str) -> None:
        self.doc_id = doc_id
        self.document_key = document_key
        self.rows: list[dict] = []
        self.occurrences: Counter[str] = Counter()

    def add(
        self,
        key: str,
        level: str,
        ref: str | None,
        content: str,
        page: int | None,
        section: Section | None,
        parent: str | None,
    ) -> str:
        self.occurrences[key] += 1
        identifier = chunk_id(self.doc_id, key, self.occurrences[key])
        self.rows.append(
            {
                "chunk_id": identifier,
                "document_id": self.doc_id,
                "document_key": self.document_key,
                "section_id": section.section_id if section else None,
                "chunk_level": level,
                "chunk_index": len(self.rows),
                "ref": ref,
                "content": content,
                "content_hash": sha256_text(content),
                "page": page,
                "section_path": list(section.path) if section else [],
                "heading": section.path[-1] if section else None,
                "parent_chunk_id": parent,
            }
        )
        return identifier


def chunk_rows(doc_id: str, document_key: str, paragraphs: list[Paragraph]) -> list[dict]:
    """Chunk rows in reading order: each section chunk comes right before its first paragraph."""
    paragraphs = merge_fragments([p for p in paragraphs if p.text.strip()])
    refs = unique_refs([p.ref for p in paragraphs])
    members: dict[int, list[Paragraph]] = {}
    for paragraph in paragraphs:
        if paragraph.section is not None:
            members.setdefault(id(paragraph.section), []).append(paragraph)
    rows = _Rows(doc_id, document_key)
    section_chunks: dict[int, str] = {}
    for index, (paragraph, ref) in enumerate(zip(paragraphs, refs, strict=True)):
        section = paragraph.section
        if section is not None and id(section) not in section_chunks:
            body = "\n".join(_read_once(members[id(section)]))
            section_chunks[id(section)] = rows.add(
                "section:" + " > ".join(section.path),
                "section",
                section.label or section.number,
                f"{section.path[-1]}\n{body}",
                section.start_page,
                section,
                None,
            )
        key = ref if ref is not None else f"#{index}"
        parent = section_chunks.get(id(section)) if section is not None else None
        own = rows.add(key, "paragraph", ref, paragraph.text, paragraph.page, section, parent)
        parts = split_parts(paragraph.text)
        if len(parts) > 1:
            for part in parts:
                rows.add(f"{key}#part", "part", ref, part, paragraph.page, section, own)
        for note in paragraph.notes:
            rows.add(f"{key}#note", "note", ref, note, paragraph.page, section, own)
    return rows.rows
