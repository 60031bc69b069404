"""The embedding cache of one model under ROOT/work/embeddings: cache key -> vector.

Kept as an append-only pair of files: `<model>.f32`, the vectors as raw float32 rows, and
`<model>.keys`, one key a line, row for row, with `<model>.json` giving the dimension. Reading
it maps the rows instead of decoding them, and a build that embedded a few texts appends a few
rows: the Parquet file it replaces was read whole (0.56 s on ObliQA) and written whole again
after any change (0.40 s), both fixed costs of every rebuild.

A build that dies while appending leaves rows or keys beyond the last complete pair; reading
keeps the pairs both files hold, and the next append cuts the rest away first. Only one build
writes a root at a time (lexkb.core.store.root_lock). A cache in the older Parquet form is read once and
written in this form.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl

from lexkb.core.store.vector_files import matrix


class VectorCache:
    """Vectors by key, held as one float32 matrix with a row per key plus the vectors added
    since it was read."""

    def __init__(self, directory: Path, model: str, fallback: Path | None = None) -> None:
        """`fallback`: another cache folder, read only: a key it holds is taken into this
        cache when first asked for (a partitioned build's parts keep caches of their own,
        and may start from the root's)."""
        self._fallback = VectorCache(fallback, model) if fallback is not None else None
        stem = directory / re.sub(r"[^A-Za-z0-9._-]+", "_", model)
        self._rows_file = stem.with_name(f"{stem.name}.f32")
        self._keys_file = stem.with_name(f"{stem.name}.keys")
        self._meta_file = stem.with_name(f"{stem.name}.json")
        self._legacy_file = stem.with_name(f"{stem.name}.parquet")
        self._row: dict[str, int] = {}
        self._blocks: list[np.ndarray] = []
        self._dimension: int | None = None
        self._stored = 0  # pairs the files hold; 0 makes the next save write the cache anew
        # An old Parquet cache goes only once it was written in this form whole: while it is
        # there it is what holds the vectors.
        if self._legacy_file.is_file():
            self._read_legacy()
        elif self._meta_file.is_file():
            self._read()

    def _read(self) -> None:
        try:
            meta = json.loads(self._meta_file.read_text(encoding="utf-8"))
            dimension = int(meta["dimension"])
            text = self._keys_file.read_text(encoding="utf-8") if self._keys_file.is_file() else ""
        except (OSError, ValueError, KeyError, TypeError):
            return  # unreadable: start again (the next save rewrites the cache)
        if dimension <= 0:
            return
        self._dimension = dimension
        keys = text.split("\n")[:-1]  # a last line without its newline is not complete
        size = self._rows_file.stat().st_size if self._rows_file.is_file() else 0
        count = min(len(keys), size // (4 * self._dimension))
        if count:
            rows = np.memmap(self._rows_file, np.float32, "r", shape=(count, self._dimension))
            self._blocks.append(rows)
            self._row = {key: row for row, key in enumerate(keys[:count])}
            self._stored = count

    def _read_legacy(self) -> None:
        frame = pl.read_parquet(self._legacy_file)
        if frame.height:
            self._dimension = len(frame["vector"][0])
            self._blocks.append(matrix(frame["vector"], self._dimension))
            self._row = {key: row for row, key in enumerate(frame["content_hash"])}

    def __contains__(self, key: str) -> bool:
        if key in self._row:
            return True
        if self._fallback is None or key not in self._fallback:
            return False
        self.put(key, self._fallback.vectors([key])[0])
        return True

    def __len__(self) -> int:
        return len(self._row)

    def put(self, key: str, vector: np.ndarray) -> None:
        if "\n" in key:
            raise ValueError(f"a cache key holds a line break: {key!r}")
        if key not in self._row:
            self._row[key] = len(self._row)
            self._blocks.append(np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def vectors(self, keys: list[str]) -> np.ndarray:
        """The vectors of `keys`, a row each (every key must be held)."""
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        if len(self._blocks) > 1:
            self._blocks = [np.vstack(self._blocks)]
        return np.asarray(self._blocks[0][[self._row[k] for k in keys]])

    def save(self) -> None:
        """Append what was added since the cache was read: rows first, then their keys."""
        added = list(self._row)[self._stored :]
        if not added:
            return
        rows = self.vectors(added)
        dimension = rows.shape[1]
        if self._stored and dimension != self._dimension:
            raise ValueError(f"vectors of {dimension} dimensions for a cache of {self._dimension}")
        self._rows_file.parent.mkdir(parents=True, exist_ok=True)
        if self._stored == 0:
            for file in (self._rows_file, self._keys_file):
                file.unlink(missing_ok=True)
            self._meta_file.write_text(json.dumps({"dimension": dimension}), encoding="utf-8")
        else:
            self._cut_to(list(self._row)[: self._stored], dimension)
        with self._rows_file.open("ab") as out:
            out.write(np.ascontiguousarray(rows, dtype=np.float32).tobytes())
        with self._keys_file.open("a", encoding="utf-8") as out:
            out.write("".join(f"{key}\n" for key in added))
        self._legacy_file.unlink(missing_ok=True)
        self._stored = len(self._row)

    def _cut_to(self, kept: list[str], dimension: int) -> None:
        """Drop whatever a build that died while appending left beyond the `kept` pairs."""
        rows_size = len(kept) * dimension * 4
        keys_size = sum(len(key.encode("utf-8")) + 1 for key in kept)
        for file, size in ((self._rows_file, rows_size), (self._keys_file, keys_size)):
            if file.stat().st_size > size:
                with file.open("r+b") as handle:
                    handle.truncate(size)
