"""Document metadata written by people: a catalog per source folder and sidecars per file.

Files do not say what other texts call them ("GEN", "the FSMR", "Regulation (EU) 2016/679"), yet
citations use exactly those names. A source folder may hold `catalog.yaml` (or .yml/.json):

    documents:
      gdpr:                      # document key (file name without extension) or file name
        title: General Data Protection Regulation
        short_name: GDPR
        version: "2016-05-04"      # as the publisher numbers editions
        aliases: ["Regulation (EU) 2016/679"]
        refers_to: [other-key]   # where its unqualified citations point when it lacks the unit
        document_type: regulation
        authority_level: primary
        author: European Parliament and Council
        source_url: https://eur-lex.europa.eu/eli/reg/2016/679/oj
        published: 2016-05-04
        effective: 2018-05-25
        tags: [data protection, privacy]
        deprecated: false
    aliases:                     # more names, each for one document key
      the Data Regulation: gdpr

and any source file may have a sidecar `<name>.meta.yaml` (or .yml/.json) with the fields of one
`documents` entry. A sidecar wins over the catalog. A file that cannot be read is reported and
ignored, so a typo in metadata never stops a build.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from lexkb.core.text.dates import as_date

CATALOG_NAMES = ("catalog.yaml", "catalog.yml", "catalog.json")
SIDECAR_SUFFIXES = (".meta.yaml", ".meta.yml", ".meta.json")
TEXT_FIELDS = (
    "title",
    "short_name",
    "version",
    "document_type",
    "authority_level",
    "author",
    "source_url",
)
LIST_FIELDS = ("aliases", "refers_to", "tags")
DATE_FIELDS = ("published", "effective")
FIELDS = (*TEXT_FIELDS, *LIST_FIELDS, *DATE_FIELDS, "deprecated")


def is_metadata_file(path: Path) -> bool:
    """Catalogs and sidecars are read by this module, never indexed as documents."""
    name = path.name.casefold()
    return name in CATALOG_NAMES or name.endswith(SIDECAR_SUFFIXES)


@dataclass(frozen=True)
class DocumentMetadata:
    title: str | None = None
    short_name: str | None = None
    version: str | None = None
    document_type: str | None = None  # regulation, rulebook, standard, guidance, act, faq ...
    authority_level: str | None = None  # as the corpus ranks its texts: primary, secondary ...
    author: str | None = None  # the issuing body
    source_url: str | None = None
    aliases: tuple[str, ...] = ()
    refers_to: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    published: date | None = None
    effective: date | None = None
    deprecated: bool | None = None

    def merged(self, other: DocumentMetadata) -> DocumentMetadata:
        """`other`'s fields where it has them; lists are joined."""
        values: dict[str, Any] = {}
        for name in FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if name in LIST_FIELDS:
                values[name] = tuple(dict.fromkeys(mine + theirs))
            else:
                values[name] = theirs if theirs is not None else mine
        return DocumentMetadata(**values)


@dataclass(frozen=True)
class Catalog:
    documents: dict[str, DocumentMetadata] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def for_document(self, document_key: str, source_key: str) -> DocumentMetadata | None:
        return self.documents.get(document_key) or self.documents.get(source_key)


def _read(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _entry(raw: object, where: str) -> DocumentMetadata:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be a mapping of {', '.join(FIELDS)}")
    unknown = set(raw) - set(FIELDS)
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {sorted(unknown)}; known: {FIELDS}")
    values: dict[str, Any] = {}
    for name in LIST_FIELDS:
        items = raw.get(name) or []
        if isinstance(items, str) or not all(isinstance(v, str) for v in items):
            raise ValueError(f"{where}: {name} must be a list of names")
        values[name] = tuple(items)
    for name in TEXT_FIELDS:
        if raw.get(name) is not None:
            if not isinstance(raw[name], str | int | float):
                raise ValueError(f"{where}: {name} must be text")
            values[name] = str(raw[name])
    for name in DATE_FIELDS:
        if raw.get(name) is not None:
            values[name] = as_date(raw[name], f"{where}: {name}")
    if raw.get("deprecated") is not None:
        if not isinstance(raw["deprecated"], bool):
            raise ValueError(f"{where}: deprecated must be true or false")
        values["deprecated"] = raw["deprecated"]
    return DocumentMetadata(**values)


def _catalog_file(path: Path) -> tuple[dict[str, DocumentMetadata], dict[str, str]]:
    raw = _read(path) or {}
    if not isinstance(raw, dict) or set(raw) - {"documents", "aliases"}:
        raise ValueError("a catalog is a mapping with `documents` and/or `aliases`")
    documents = {
        str(key): _entry(value, f"documents.{key}")
        for key, value in (raw.get("documents") or {}).items()
    }
    aliases = raw.get("aliases") or {}
    if not isinstance(aliases, dict):
        raise ValueError("`aliases` must map names to document keys")
    return documents, {str(name): str(key) for name, key in aliases.items()}


def load(paths: Sequence[str | Path], source_files: list[Path]) -> Catalog:
    """The catalogs in the source folders, then the sidecars beside the source files."""
    documents: dict[str, DocumentMetadata] = {}
    aliases: dict[str, str] = {}
    errors: dict[str, str] = {}
    for root in map(Path, paths):
        folder = root if root.is_dir() else root.parent
        for name in CATALOG_NAMES:
            file = folder / name
            if not file.is_file():
                continue
            try:
                entries, names = _catalog_file(file)
            except (OSError, ValueError, yaml.YAMLError) as exc:
                errors[str(file)] = f"{type(exc).__name__}: {exc}"
                continue
            for key, meta in entries.items():
                documents[key] = documents.get(key, DocumentMetadata()).merged(meta)
            aliases.update(names)
    for source in source_files:
        stem = source.name.rsplit(".", 1)[0]
        for suffix in SIDECAR_SUFFIXES:
            file = source.with_name(stem + suffix)
            if not file.is_file():
                continue
            try:
                meta = _entry(_read(file), file.name)
            except (OSError, ValueError, yaml.YAMLError) as exc:
                errors[str(file)] = f"{type(exc).__name__}: {exc}"
                continue
            documents[stem] = documents.get(stem, DocumentMetadata()).merged(meta)
    return Catalog(documents, aliases, errors)


def apply(documents: pl.DataFrame, catalog: Catalog) -> pl.DataFrame:
    """The documents table with the catalog's and sidecars' fields filled in. What the document
    itself states (a contract's title, type and dates) stays where the catalog says nothing;
    lists (aliases, tags) hold both."""
    metas = [
        catalog.for_document(key, source) or DocumentMetadata()
        for key, source in documents.select("document_key", "source_name").rows()
    ]

    def pick(name: str) -> list:
        found = (
            documents[name].to_list() if name in documents.columns else [None] * documents.height
        )
        return [
            getattr(m, name) if getattr(m, name) is not None else own
            for m, own in zip(metas, found, strict=True)
        ]

    columns = [
        pl.Series("title", pick("title"), dtype=pl.String),
        pl.Series("deprecated", [bool(m.deprecated) for m in metas], dtype=pl.Boolean),
    ]
    columns += [pl.Series(name, pick(name), dtype=pl.String) for name in TEXT_FIELDS[1:]]

    def joined(name: str) -> list[list[str]]:
        """The catalog's list, then what the document states itself ("2010 c. 23")."""
        own = documents[name].to_list() if name in documents.columns else [None] * len(metas)
        return [
            list(dict.fromkeys([*getattr(m, name), *(found or [])]))
            for m, found in zip(metas, own, strict=True)
        ]

    columns += [pl.Series(name, joined(name), dtype=pl.List(pl.String)) for name in LIST_FIELDS]
    columns += [pl.Series(name, pick(name), dtype=pl.Date) for name in DATE_FIELDS]
    return documents.with_columns(columns)
