"""The best rows of a keyword ranking, found without scoring every row.

A search ranks paragraphs by BM25 over their words plus the heading field (lexkb.headings), and
then reads only the best few: its k hits, or the FUSION_DEPTH a hybrid search fuses. Scoring
every row the query's words touch made keyword search grow with the corpus (6.9 ms p50 at 30x
ObliQA, docs/scaling.md), most of it in the postings of a query's common words ("financial",
"requirements"), which can only lift a row a little each.

So this is MaxScore-style dynamic pruning, done a few numpy passes at a time rather than a
posting at a time:

1. **A floor.** The postings of the query's rarest words (a few thousand) give their rows a
   partial score; the best _FLOOR_ROWS x `depth` of those rows are scored exactly, and the
   `depth`-th best of them is a score the `depth`-th best row of the whole ranking reaches for
   certain. (The partial scores alone made a floor a third as high, and pruning too weak.)
2. **Words that cannot decide.** Each word's highest weight in any row (its ceiling, kept per
   term at open) bounds what it adds. The commonest words, while their ceilings with the
   heading field's stay under _ASIDE_SHARE of the floor, are set aside: a row holding none of
   the other words scores below the floor, so it is not among the best.
3. **Candidates.** The other words are summed over every row (one bincount); the rows whose sum
   with the heading field and the set-aside ceilings can still reach the floor get the
   set-aside words' weights looked up, which makes their scores exact.

Every row not among the candidates ranks below the floor, strictly, so the best `depth` rows and
their order (ties by row) are those of scoring everything, and so are their scores: a row's
score adds the query's words rarest first (QueryTerms.summed) whichever way it is scored, so
the candidates' floats are the full bincount's, bit for bit. `KeywordRanking.at` gives any other
row's exact score on demand (a dense candidate a hybrid search fuses, a neighbour a graph walk
reaches). A query of few postings, or one whose floor cannot be set, is scored whole as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from lexkb import fusion
from lexkb.headings import HeadingScores
from lexkb.keyword import Keyword, Postings, QueryTerms, added, gathered

_rank_kernel: ModuleType | None
try:
    from lexkb import _rank_kernel
except ImportError:  # a wheel built where no C compiler was found (hatch_build.py)
    _rank_kernel = None

# Relative slack on every bound, far above float32 rounding (1e-7): a bound errs high.
_SLACK = 1e-5
# The floor reads the rarest words' postings until they hold this many (and at least `depth`
# kept rows): a few thousand rows, summed by sorting them.
_FLOOR_POSTINGS = 2_048
# A query whose postings are fewer than this is scored whole: pruning would not pay.
_SMALL = 4 * _FLOOR_POSTINGS
# Past that, a cost rule (`_pays`): pruning saves about 2 ns a posting and 1 ns a row against
# scoring every row (it reads the commonest words' postings for the candidates alone, and makes
# two passes over every row instead of six), and costs about 0.2 ms more at depth 10, 0.4 ms at
# 200 (the floor, and looking up the candidates' set-aside words, word by word). So it pays
# once postings + rows / 2 reaches _PRUNE_FROM + _PRUNE_FROM_PER_DEPTH x depth: never on 1x
# ObliQA (16,779 rows), on every query 30x holds (503,370). Fitted on ObliQA's paragraphs
# tiled 1x-30x, at depths 10, 50, 200 and 1000 (docs/scaling.md).
_PRUNE_FROM = 90_000
_PRUNE_FROM_PER_DEPTH = 800
# The floor is the exact score of the depth-th best of this many times `depth` rows.
_FLOOR_ROWS = 4
# The words set aside may add at most this share of the floor (a speed setting: the ranking
# is exact at any share below 1).
_ASIDE_SHARE = 0.5


@dataclass(frozen=True)
class KeywordQuery:
    """What a keyword ranking reads: the postings (`postings`, the paragraphs' or every
    chunk's, of `keyword`), the query's terms and heading field, and the rows a search keeps
    (`keep`, a mask over every row). `masked`: whether the postings or the heading field reach
    rows `keep` drops, so that scoring every row must zero them (not so for a search of every
    paragraph, with the paragraphs' postings and their heading field)."""

    keyword: Keyword
    terms: QueryTerms
    headings: HeadingScores
    keep: np.ndarray
    postings: Postings
    masked: bool = True

    def exact(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ranked and body scores of `rows`, looked up: what scoring every row gives them."""
        body = self.keyword.row_scores(self.terms, rows, self.postings)
        return body + self.headings.weighted(rows), body


@dataclass(frozen=True)
class KeywordRanking:
    """A query's keyword ranking over the kept rows: `rows` (sorted) hold every kept row that can
    be among its best `depth`, with their exact `ranked` scores (words and heading field, as a
    search ranks) and `body` scores (words alone, as relevance reads them); any other row's
    exact scores come from `at`."""

    query: KeywordQuery
    rows: np.ndarray
    ranked: np.ndarray
    body: np.ndarray
    pruned: bool  # whether rows ranking below the best were left unscored
    covered: np.ndarray | None = None  # `rows`' Keyword.coverage, where the ranking counted it

    def best(self, k: int) -> np.ndarray:
        """Rows of the k highest positive ranked scores, in row order (as fusion.best)."""
        best: np.ndarray = self.rows[fusion.best(self.ranked, k)]
        return best

    def at(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ranked and body scores of any `rows` (sorted or not); 0 where a row is not kept."""
        rows = np.asarray(rows, dtype=np.int64)
        held, ranked = fusion.held(self.rows, self.ranked, rows)
        body = fusion.held(self.rows, self.body, rows)[1]
        other = np.flatnonzero(~held & self.query.keep[rows])
        if other.size:
            ranked[other], body[other] = self.query.exact(rows[other])
        return ranked, body

    def sums(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Body scores and Keyword.coverage of any `rows`: what relevance features read."""
        rows = np.asarray(rows, dtype=np.int64)
        query = self.query
        if self.covered is not None and self.rows.size:
            # A keyword search's hits are among its ranking's rows: read both at once.
            at = np.minimum(np.searchsorted(self.rows, rows), self.rows.size - 1)
            if np.array_equal(self.rows[at], rows):
                return self.body[at], self.covered[at]
        if self.covered is None:
            held, covered = np.zeros(rows.size, dtype=bool), np.zeros(rows.size)
        else:
            held, covered = fusion.held(self.rows, self.covered, rows)
        if not held.all():
            other = np.flatnonzero(~held)
            covered[other] = query.keyword.coverage(query.terms, rows[other], query.postings)
        return self.at(rows)[1], covered


def rank(query: KeywordQuery, depth: int) -> KeywordRanking:
    """The ranking of the kept rows for the query, exact at least for its best `depth` rows."""
    postings, headings, keep = query.postings, query.headings, query.keep
    summed = query.terms.summed
    lengths = postings.indptr[summed + 1] - postings.indptr[summed]
    floor = None
    if _pays(int(lengths.sum()), keep.size, depth):
        floor = _floor(query, lengths, depth)
    if floor is None:
        return _everything(query, depth)
    # Set aside the commonest words (the last summed) while what they and the heading field
    # can add stays below a share of the floor: set aside more, and fewer postings are read
    # but more rows come near the floor and must be looked up.
    reach = np.cumsum(postings.ceiling[summed[::-1]].astype(np.float64)) + headings.ceiling
    aside = int(np.searchsorted(reach * (1 + _SLACK), _ASIDE_SHARE * floor, side="left"))
    essential, rest = summed[: summed.size - aside], summed[summed.size - aside :]
    spared = float(reach[aside - 1]) - headings.ceiling if aside else 0.0
    # Every kept row the essential words reach that could still pass the floor.
    rows, weights = gathered(postings, essential)
    partial = np.bincount(rows, weights=weights, minlength=keep.size)
    bound = floor / (1 + _SLACK) - spared
    candidates = np.flatnonzero(partial >= bound - headings.ceiling)
    candidates = candidates[keep[candidates]]
    heading = headings.weighted(candidates)
    reachable = partial[candidates] + heading >= bound
    candidates, heading = candidates[reachable], heading[reachable]
    # Exact: the essential words' sum, then the others' weights, in `summed`'s order.
    total = partial[candidates]
    added(postings, rest, candidates, total)
    body = total.astype(np.float32)
    return KeywordRanking(query, candidates, body + heading, body, pruned=True)


def _pays(postings: int, rows: int, depth: int) -> bool:
    """Whether pruning a ranking of `depth` over `rows` rows is likely faster than scoring
    every row, for a query whose words hold `postings` postings (see _PRUNE_FROM)."""
    if postings < _SMALL:
        return False
    return postings + rows / 2 >= _PRUNE_FROM + _PRUNE_FROM_PER_DEPTH * depth


def _floor(query: KeywordQuery, lengths: np.ndarray, depth: int) -> float | None:
    """A score the `depth`-th best kept row reaches for certain: the `depth`-th best exact score
    among the rows the rarest words rank highest (their weights and the heading field); None
    when too few rows hold any of the query's words."""
    postings, headings, keep = query.postings, query.headings, query.keep
    summed = query.terms.summed
    by_length = np.argsort(lengths, kind="stable")
    read = np.cumsum(lengths[by_length])
    first = int(np.searchsorted(read, max(_FLOOR_POSTINGS, 4 * depth))) + 1
    for taken in range(min(first, by_length.size), by_length.size + 1):
        union, partial = _summed(*gathered(postings, summed[by_length[:taken]]))
        kept = keep[union]
        if np.count_nonzero(kept) < depth:
            continue
        union = union[kept]
        partial = partial[kept] + headings.weighted(union)
        tried = min(union.size, _FLOOR_ROWS * depth)
        likely = np.sort(union[np.argpartition(-partial, tried - 1)[:tried]])
        exact = query.exact(likely)[0]
        kth = np.partition(exact, tried - depth)[tried - depth]
        return float(kth) * (1 - _SLACK) if kth > 0 else None
    return None


def _summed(rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct `rows` (sorted) and each one's sum of `weights`. A stable sort of postings
    that are runs of sorted rows merges the runs: three times faster than np.unique here."""
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    return rows[starts], np.add.reduceat(weights[order], starts)


def _everything(query: KeywordQuery, depth: int) -> KeywordRanking:
    """The ranking by scoring every row, its best `depth` kept as the candidates, with their
    coverage: in compiled code where the wheel has it, else with numpy (the same rows and
    floats)."""
    if _rank_kernel is None:
        return _everything_numpy(query, depth)
    return _everything_compiled(query, depth)


class _Scratch:
    """The kernel's scratch: per search, two float64 arrays of one slot per row that it adds
    the words' and the heading field's postings into, lent zeroed and handed back zeroed.
    Searches borrow them from here and return them, so that memory follows the searches
    running at once (the kernel releases the GIL), not the threads a service keeps; a few are
    kept for the next searches, since new zeroed arrays would cost more than the ranking."""

    KEPT = 4

    def __init__(self) -> None:
        self._free: list[tuple[np.ndarray, np.ndarray]] = []
        self._lock = threading.Lock()

    def borrow(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            while self._free:
                sums = self._free.pop()
                if sums[0].size == rows:
                    return sums
        return np.zeros(rows), np.zeros(rows)

    def give_back(self, sums: tuple[np.ndarray, np.ndarray]) -> None:
        with self._lock:
            if len(self._free) < self.KEPT:
                self._free.append(sums)


_scratch = _Scratch()


def _everything_compiled(query: KeywordQuery, depth: int) -> KeywordRanking:
    """`_everything` by lexkb/_rank_kernel.c: one pass adds the postings, one scores and keeps
    the best `depth`, and only those are looked up for their coverage."""
    assert _rank_kernel is not None
    postings, headings = query.postings, query.headings
    field_rows, field_weights = headings.row_postings.gathered(headings.tokens)
    rows = np.empty(depth, dtype=np.int64)
    ranked, body_scores = np.empty(depth, dtype=np.float32), np.empty(depth, dtype=np.float32)
    covered = np.empty(depth)
    sums = _scratch.borrow(query.keep.size)
    found = _rank_kernel.rank_every_row(
        postings.indptr,
        postings.rows,
        postings.weights,
        query.keyword.idf,
        np.ascontiguousarray(query.terms.summed, dtype=np.int64),
        field_rows,
        field_weights,
        bool(headings.tokens),
        headings.weight,
        query.keep if query.masked else None,
        *sums,
        rows,
        ranked,
        body_scores,
        covered,
    )
    _scratch.give_back(sums)  # zeroed again by the kernel (after a ValueError, dropped)
    return KeywordRanking(
        query, rows[:found], ranked[:found], body_scores[:found], False, covered[:found]
    )


def _everything_numpy(query: KeywordQuery, depth: int) -> KeywordRanking:
    """`_everything` with numpy: a dozen calls over arrays of every row."""
    found, weights = gathered(query.postings, query.terms.summed)
    body = np.bincount(found, weights=weights, minlength=query.keep.size).astype(np.float32)
    ranked = query.headings.added_to(body)
    if query.masked:
        ranked *= query.keep  # 0 where not kept: a fifth of the cost of assigning through a mask
    rows = fusion.best(ranked, depth)
    covered = _covered(query, found, rows)
    return KeywordRanking(query, rows, ranked[rows], body[rows], False, covered)


def _covered(query: KeywordQuery, found: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Keyword.coverage of `rows` (sorted) from the query's postings `found` (gathered): the
    IDF of each word whose postings hold the row, added in the same order, so the same
    float64, at half the cost of looking each word's postings up."""
    postings, summed = query.postings, query.terms.summed
    marked = np.zeros(query.keep.size, dtype=bool)
    marked[rows] = True
    at = np.flatnonzero(marked[found])
    ends = np.cumsum(postings.indptr[summed + 1] - postings.indptr[summed])
    idf = query.keyword.idf[summed[np.searchsorted(ends, at, side="right")]]
    return np.bincount(np.searchsorted(rows, found[at]), weights=idf, minlength=rows.size)
