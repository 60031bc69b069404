"""The embedding cache's files: appended, read back, and whole after a build died mid-append."""

import numpy as np
import polars as pl

from transforms.indexing.vector_cache import VectorCache


def _vector(value: float) -> np.ndarray:
    return np.full(4, value, dtype=np.float32)


def test_added_vectors_are_appended_and_read_back(tmp_path):
    cache = VectorCache(tmp_path, "model/one")
    cache.put("a", _vector(1))
    cache.put("b", _vector(2))
    cache.save()
    size = (tmp_path / "model_one.f32").stat().st_size
    again = VectorCache(tmp_path, "model/one")
    again.put("c", _vector(3))
    again.put("a", _vector(9))  # held already: kept as it was
    again.save()
    assert (tmp_path / "model_one.f32").stat().st_size == size + 16
    read = VectorCache(tmp_path, "model/one")
    assert np.array_equal(
        read.vectors(["c", "a", "b"]), np.stack([_vector(3), _vector(1), _vector(2)])
    )


def test_what_a_dead_build_half_appended_is_dropped(tmp_path):
    cache = VectorCache(tmp_path, "m")
    cache.put("a", _vector(1))
    cache.save()
    with (tmp_path / "m.f32").open("ab") as rows:
        rows.write(_vector(5).tobytes() + b"\0\0")  # a row whose key never came, and a part row
    with (tmp_path / "m.keys").open("a") as keys:
        keys.write("b")  # a key without its line end
    read = VectorCache(tmp_path, "m")
    assert "a" in read and "b" not in read
    read.put("c", _vector(3))
    read.save()
    again = VectorCache(tmp_path, "m")
    assert np.array_equal(again.vectors(["a", "c"]), np.stack([_vector(1), _vector(3)]))
    assert (tmp_path / "m.keys").read_text() == "a\nc\n"


def test_a_parquet_cache_is_read_and_rewritten_in_the_new_form(tmp_path):
    pl.DataFrame(
        {"content_hash": ["a", "b"], "vector": [[1.0] * 4, [2.0] * 4]},
        schema={"content_hash": pl.String, "vector": pl.List(pl.Float32)},
    ).write_parquet(tmp_path / "m.parquet")
    cache = VectorCache(tmp_path, "m")
    assert np.array_equal(cache.vectors(["b"]), _vector(2)[None])
    cache.save()
    assert not (tmp_path / "m.parquet").exists()
    assert np.array_equal(
        VectorCache(tmp_path, "m").vectors(["a", "b"]), np.stack([_vector(1), _vector(2)])
    )
