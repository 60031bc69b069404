"""Types of the compiled keyword ranking kernel (lexkb/_rank_kernel.c)."""

import numpy as np

def rank_every_row(
    indptr: np.ndarray,
    rows: np.ndarray,
    weights: np.ndarray,
    idf: np.ndarray,
    terms: np.ndarray,
    field_rows: np.ndarray,
    field_weights: np.ndarray,
    has_field: bool,
    heading_weight: float,
    keep: np.ndarray | None,
    body: np.ndarray,
    field: np.ndarray,
    out_rows: np.ndarray,
    out_ranked: np.ndarray,
    out_body: np.ndarray,
    out_covered: np.ndarray,
    /,
) -> int: ...
