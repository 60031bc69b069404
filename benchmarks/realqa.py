"""People's questions over six real documents built into one index (issue 46).

    .venv/bin/python -m benchmarks.realqa [--data ../shared/data] [--work benchmarks/out/realqa]
        [--reuse] [--no-peer] [--kinds answerable,list] [--ids q001,q002] [--dump RUN.jsonl]

The six documents of `<data>/realdocs/` (not `xml/` or `eu/`) are built into one index with
`lexkb build` (the local embedder), and every question of `<data>/realqa/questions.jsonl` is
asked through `lexkb.answers.ask.ask` one at a time, without the answer cache. A follow-up or a
switch is asked with the question before it as the conversation's earlier turn.

Scoring follows realqa's README: a cited passage is right when, normalised, it holds the quote
of any of the question's answers. Normalising here is coarser than the README's (case folded,
quotes and dashes unified, then only letters and digits kept), so that a line-break hyphen, a
PDF's glued words and every whitespace difference read alike on both sides; the quotes are 8-25
words, so this cannot make a wrong passage match.

- answered right: of the answerable and list questions, those answered (DIRECT or QUALIFIED)
  with a cited source holding a quote;
- abstained: ABSTAIN, by kind; DIRECT right: of the DIRECT answers to questions that have an
  answer, those citing a right source;
- follow-ups and switches: answered with a right source, read with the turn before;
- search: `Index.search(question, k=10)` (hybrid, defaults), whether the first hit and any of
  the first ten hold a quote (answerable and list questions);
- the peer, in the same run: LlamaIndex's defaults approximated without LlamaIndex (not
  installed here): each document's text (pypdfium2 pages, python-docx paragraphs and table
  cells, the XHTML's text) cut into windows of 1024 tokens (words and punctuation marks) overlapping by 200, ranked
  by bm25s with English stopwords and the Snowball stemmer, as LlamaIndex's BM25Retriever does.

Do not tune on these questions: the README keeps them a measure. Only a threshold may be set on
them, and BENCHMARKS.md says which.
"""

from __future__ import annotations

import argparse
import html.parser
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from evaluation_data.realdocs import SIX

REPO = Path(__file__).resolve().parent.parent

DOCUMENTS = SIX
ANSWERABLE = ("answerable", "list")
_UNIFY = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\ufffe": ""})
WINDOW_TOKENS, WINDOW_OVERLAP = 1024, 200


def flat(text: str) -> str:
    """Letters and digits only, case folded: the form passages and quotes are compared in."""
    text = unicodedata.normalize("NFKC", text or "").translate(_UNIFY).casefold()
    return re.sub(r"[\W_]+", "", text)


def ref_key(ref: str | None) -> str:
    """A ref compared without case, spaces or a trailing dot: "Article 5(2)" -> "article5(2)"."""
    return re.sub(r"\s+", "", (ref or "").casefold()).rstrip(".")


def within(ref: str, gold: str) -> bool:
    """`ref` is `gold`, a unit inside it, or a unit around it ("Article 5" holds "Article
    5(2)"): a passage for either holds the answer or is part of it."""
    a, b = ref_key(ref), ref_key(gold)
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith(short) and long[len(short)] in "(.["


@dataclass(frozen=True)
class Question:
    """A question and how a passage is judged right: by a quote it must hold (realqa), or by
    the document and unit it must be (the people's question sets written here)."""

    id: str
    kind: str
    question: str
    previous: str | None
    quotes: tuple[str, ...]
    units: tuple[tuple[str, str], ...] = ()

    def right(self, hit) -> bool:
        if self.units:
            return any(hit.document_key == d and within(hit.ref, r) for d, r in self.units)
        held = flat(hit.text)
        return any(q and q in held for q in self.quotes)


def questions(path: Path) -> list[Question]:
    """realqa's questions (answers with quotes), or a people's set written here (answers as
    document key and ref, `benchmarks/questions/people/`)."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            answers = row.get("answers", [])
            quotes = tuple(flat(a["quote"]) for a in answers if "quote" in a)
            units = tuple((a["document"], a["ref"]) for a in answers if "quote" not in a)
            found.append(
                Question(row["id"], row["kind"], row["question"], row.get("previous"), quotes,
                         units)
            )  # fmt: skip
    return found


def keyed(items: list[Question], index) -> list[Question]:
    """`items` with their answers' documents under the index's keys: the sets name documents
    by their file names, which the index still resolves (its keys are made readable)."""
    keys: dict[str, str] = {}
    for name in {d for item in items for d, _ in item.units}:
        keys[name] = index.document_paragraphs(name)[0]["document_key"]
    return [replace(i, units=tuple((keys[d], r) for d, r in i.units)) for i in items]


def build(data: Path, work: Path, reuse: bool) -> Path:
    root = work / "index"
    if reuse and (root / "CURRENT").exists():
        return root
    sources = work / "sources"
    shutil.rmtree(sources, ignore_errors=True)
    sources.mkdir(parents=True)
    for name in DOCUMENTS:
        shutil.copyfile(data / "realdocs" / name, sources / name)
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run(
        [str(REPO / ".venv" / "bin" / "lexkb"), "build", str(sources), "--out", str(root),
         "--quiet"],
        check=True,
    )  # fmt: skip
    print(f"built {root} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return root


# The peer ------------------------------------------------------------------------------------
class _HtmlText(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1
        elif tag in ("p", "div", "h1", "h2", "h3", "h4", "h5", "li", "tr"):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def document_text(path: Path) -> str:
    if path.suffix == ".pdf":
        import pypdfium2

        pdf = pypdfium2.PdfDocument(str(path))
        return "\n".join(page.get_textpage().get_text_range() for page in pdf)
    if path.suffix == ".docx":
        import docx

        document = docx.Document(str(path))
        cells = [c.text for t in document.tables for r in t.rows for c in r.cells]
        return "\n".join([p.text for p in document.paragraphs] + cells)
    parser = _HtmlText()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return "".join(parser.parts)


def windows(text: str) -> list[str]:
    """Windows of WINDOW_TOKENS tokens overlapping by WINDOW_OVERLAP. A token is a word or a
    punctuation mark, near what a BPE tokenizer counts on English legal text (tiktoken's
    encodings are downloaded on first use, which this machine cannot)."""
    tokens = [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]
    step = WINDOW_TOKENS - WINDOW_OVERLAP
    return [
        text[tokens[i][0] : tokens[min(i + WINDOW_TOKENS, len(tokens)) - 1][1]]
        for i in range(0, max(len(tokens) - WINDOW_OVERLAP, 1), step)
    ]


@dataclass(frozen=True)
class Window:
    """A peer's passage, judged as a hit is (by the quote it holds)."""

    text: str


class Peer:
    """bm25s over 1024-token windows of every document (LlamaIndex's defaults, approximated)."""

    def __init__(self, data: Path) -> None:
        import bm25s
        import Stemmer

        self.texts = [
            w for name in DOCUMENTS for w in windows(document_text(data / "realdocs" / name))
        ]
        self.stemmer = Stemmer.Stemmer("english")
        self.retriever = bm25s.BM25()
        self.retriever.index(
            bm25s.tokenize(self.texts, stopwords="en", stemmer=self.stemmer, show_progress=False),
            show_progress=False,
        )
        self._bm25s = bm25s

    def search(self, query: str, k: int = 10) -> list[Window]:
        tokens = self._bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer,
                                      show_progress=False)  # fmt: skip
        rows, _ = self.retriever.retrieve(tokens, k=min(k, len(self.texts)), show_progress=False)
        return [Window(self.texts[int(r)]) for r in rows[0]]


# Scoring --------------------------------------------------------------------------------------
def share(flags: Iterable[bool]) -> tuple[int, int]:
    flags = list(flags)
    return sum(flags), len(flags)


def fmt(pair: tuple[int, int]) -> str:
    right, total = pair
    return f"{right / total:.3f} ({right}/{total})" if total else "-"


def ask_all(index, items: list[Question], dump, settings=None) -> list[dict]:
    from lexkb.answers.ask import AskSettings, ask

    rows = []
    for item in items:
        turns = [{"question": item.previous}] if item.previous else None
        started = time.perf_counter()
        answer = ask(index, item.question, turns=turns, cache=None,
                     settings=settings or AskSettings())  # fmt: skip
        seconds = time.perf_counter() - started
        cited = [index.hit(s.chunk_id) for s in answer.sources]
        row = {
            "id": item.id,
            "kind": item.kind,
            "question": item.question,
            "mode": answer.mode,
            "reason": answer.abstention_reason,
            "explanation": answer.explanation,
            "sources": [s.citation for s in answer.sources],
            "right": any(item.right(h) for h in cited),
            "first_right": bool(cited) and item.right(cited[0]),
            "answer": answer.answer,
            "flagged": answer.verification.get("answering", {}).get("answers") is False,
            "read_as": answer.read_as,
            "best_answers": answer.details.get("best_answers"),
            "scope": answer.details.get("scope"),
            "seconds": round(seconds, 3),
        }
        if item.kind in ANSWERABLE:
            hits = index.search(item.question, k=10).hits
            row["search"] = [h.citation for h in hits]
            row["search_first"] = bool(hits) and item.right(hits[0])
            row["search_ten"] = any(item.right(h) for h in hits)
        rows.append(row)
        if dump:
            dump.write(json.dumps(row, ensure_ascii=False) + "\n")
            dump.flush()
    return rows


def report(rows: list[dict], peer_rows: dict[str, tuple[bool, bool]] | None) -> None:
    answerable = [r for r in rows if r["kind"] in ANSWERABLE]
    unanswerable = [r for r in rows if r["kind"] == "unanswerable"]
    direct = [r for r in rows if r["mode"] == "DIRECT" and r["kind"] != "unanswerable"]
    answered = lambda r: r["mode"] != "ABSTAIN"  # noqa: E731
    first_kinds = [r for r in rows if r["kind"] != "unanswerable"]
    declined_or_flagged = lambda r: not answered(r) or r["flagged"]  # noqa: E731
    lines = [
        ("first source right (answerable, list, follow-up, switch)",
         share(answered(r) and r["first_right"] for r in first_kinds)),
        ("unanswerable abstained or flagged", share(declined_or_flagged(r) for r in unanswerable)),
        ("answerable abstained or flagged", share(declined_or_flagged(r) for r in answerable)),
        ("wrong answers not flagged (of all questions)",
         share(answered(r) and not r["flagged"] and (r["kind"] == "unanswerable" or not r["right"])
               for r in rows)),
        ("answerable answered citing a right provision",
         share(answered(r) and r["right"] for r in answerable)),
        ("answerable abstained", share(not answered(r) for r in answerable)),
        ("unanswerable abstained", share(not answered(r) for r in unanswerable)),
        ("DIRECT answers citing a right provision", share(r["right"] for r in direct)),
        ("DIRECT answers whose first source is right", share(r["first_right"] for r in direct)),
        ("follow-ups answered right", share(answered(r) and r["right"] for r in rows
                                            if r["kind"] == "followup")),
        ("switches answered right", share(answered(r) and r["right"] for r in rows
                                          if r["kind"] == "switch")),
        ("search: first hit right", share(r["search_first"] for r in answerable)),
        ("search: a right hit in the first ten", share(r["search_ten"] for r in answerable)),
    ]  # fmt: skip
    if peer_rows is not None:
        lines += [
            ("peer (bm25s, 1024-token windows): first right",
             share(peer_rows[r["id"]][0] for r in answerable)),
            ("peer: a right window in the first ten",
             share(peer_rows[r["id"]][1] for r in answerable)),
        ]  # fmt: skip
    print("| measure | figure |\n| --- | --- |")
    for name, pair in lines:
        print(f"| {name} | {fmt(pair)} |")
    seconds = sorted(r["seconds"] for r in rows)
    print(f"| ask p50 / p90 seconds | {statistics.median(seconds):.3f} / "
          f"{seconds[int(0.9 * (len(seconds) - 1))]:.3f} |")  # fmt: skip
    sweep(answerable, unanswerable)
    reasons: dict[str, int] = {}
    for r in answerable:
        if not answered(r):
            reasons[str(r["reason"])] = reasons.get(str(r["reason"]), 0) + 1
    print(f"\nanswerable abstained by reason: {reasons}")


GRID = (0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3)


def sweep(answerable: list[dict], unanswerable: list[dict]) -> None:
    """What EvidenceSettings.min_answers would keep and decline at other values: the share of
    answerable questions whose best chance reaches it, and of unanswerable ones under it
    (questions declined before the relevance model read them count as declined)."""
    print("\n| min_answers | answerable kept | unanswerable declined |\n| --- | --- | --- |")
    for value in GRID:
        kept = share((r["best_answers"] or 0.0) >= value for r in answerable)
        declined = share((r["best_answers"] or 0.0) < value for r in unanswerable)
        print(f"| {value} | {fmt(kept)} | {fmt(declined)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument(
        "--questions", type=Path, nargs="+",
        help="people's question sets written here (benchmarks/questions/people/*.jsonl), asked "
        "of --index instead of realqa's",
    )  # fmt: skip
    parser.add_argument("--index", type=Path, help="the index those sets were written against")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "realqa")
    parser.add_argument("--reuse", action="store_true", help="score the index built before")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--kinds", help="only these kinds, comma-separated")
    parser.add_argument("--ids", help="only these question ids, comma-separated")
    parser.add_argument("--dump", type=Path, help="write each question's result as JSON lines")
    parser.add_argument(
        "--split",
        help="only the people's questions of this split (train, tune, "
        "test: evaluation_data.people.split_of)",
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also ask without the ranker "
        "and the answerability model (main before issue 58), in the same run",
    )
    args = parser.parse_args()
    sets = args.questions or [args.data / "realqa" / "questions.jsonl"]
    items = [q for path in sets for q in questions(path)]
    if args.kinds:
        items = [q for q in items if q.kind in args.kinds.split(",")]
    if args.ids:
        items = [q for q in items if q.id in args.ids.split(",")]
    if args.split:
        from evaluation_data.people import split_of

        rows = [json.loads(line) for path in sets for line in path.read_text("utf-8").splitlines()
                if line.strip()]  # fmt: skip
        chosen = {row["id"] for row in rows if split_of(row) == args.split}
        items = [q for q in items if q.id in chosen]
    root = args.index if args.questions else build(args.data, args.work, args.reuse)

    from lexkb import Index

    index = Index.open(root)
    index.search("warm up", k=1)
    items = keyed(items, index)
    dump = args.dump.open("w", encoding="utf-8") if args.dump else None
    rows = ask_all(index, items, dump)
    if args.reference:
        from lexkb.answers.ask import AskSettings
        from lexkb.answers.evidence import EvidenceSettings

        before = AskSettings(rank=False, evidence=EvidenceSettings(answerability=False))
        print("\nreference: without the ranker and the answerability model")
        report(ask_all(index, items, None, before), None)
        print("\nnow:")
    peer_rows = None
    if not args.no_peer and not args.questions:
        peer = Peer(args.data)
        peer_rows = {}
        for item in items:
            found = peer.search(item.question) if item.kind in ANSWERABLE else []
            peer_rows[item.id] = (bool(found) and item.right(found[0]),
                                  any(item.right(t) for t in found))  # fmt: skip
    report(rows, peer_rows)


if __name__ == "__main__":
    main()
