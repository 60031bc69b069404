"""True claims in an answer's own words: how many does verify_citations fail? (issue 37, item 1)

    .venv/bin/python -m benchmarks.paraphrase [--data ../shared/data] [--support FILE.onnx]

XRefRAG dev (ADGM and UK PRA, Apache-2.0): each gold answer is written in sentences that end
with the tag of the passage they rest on ("... as applicable. [#SRC:a373...]"). A sentence with
one tag is a true claim, paraphrased, cited to that passage (`source_text` or `target_text`).
Sentences citing both passages ("Putting the two together: ...") are left out: they follow from
the two read together. Each claim is judged against its passage as one paragraph
(`lexkb.answers.claims.judge`), as shipped and without the support model (rules, then word
overlap, as before issue 37). Reported: the share failed (any verdict but `supported`), by what
decided it. XRefRAG's train split trained the relevance model, never the support model; dev is
read here only. `--support` measures another support model file in place of the shipped one.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from lexkb.answers.claims import judge
from lexkb.results import Hit

REPO = Path(__file__).resolve().parent.parent


TAG = re.compile(r"\s*\[#(SRC|TGT):[^\]]+\]")


def claims(data: Path) -> list[tuple[str, str, str]]:
    """(regime, claim, cited passage) for every one-tag sentence of the dev gold answers."""
    out = []
    for regime in ("ADGM", "UKFIN"):
        path = data / "xrefrag" / f"{regime}-dev.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            passages = {"SRC": item["source_text"], "TGT": item["target_text"]}
            # each sentence runs up to and including its tags
            for sentence in re.findall(
                r"[^\[]+?(?:\s*\[#(?:SRC|TGT):[^\]]+\])+", item["gold_answer"]
            ):
                kinds = set(re.findall(r"\[#(SRC|TGT):", sentence))
                text = TAG.sub("", sentence).strip()
                if len(kinds) == 1 and len(text.split()) >= 6:
                    out.append((regime, text, passages[kinds.pop()]))
    return out


def paragraph(text: str) -> Hit:
    return Hit("passage", "xrefrag", None, "paragraph", None, [], None, None, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--support", type=Path, default=None)
    args = parser.parse_args()
    if args.support is not None:
        from lexkb.core.judge import shipped
        from lexkb.core.judge.pairs import PairModel

        model = PairModel(args.support, max_tokens=512)
        shipped.support_model = lambda: model
    rows = claims(args.data)
    print(f"XRefRAG dev: {len(rows)} one-passage sentences of gold answers")
    shipped_failed, overlap_failed = Counter(), Counter()
    by_regime: dict[str, Counter] = {}
    for regime, claim, passage in rows:
        hit = paragraph(passage)
        result = judge(claim, hit)
        failed = result["verdict"] != "supported"
        by_regime.setdefault(regime, Counter())[failed] += 1
        if failed:
            shipped_failed[f"{result['verdict']} ({result['decided_by']})"] += 1
        result = judge(claim, hit, model=False)
        if result["verdict"] != "supported":
            overlap_failed[f"{result['verdict']} ({result['decided_by']})"] += 1
    n = len(rows)
    print("| verifier | failed | by what decided |")
    print("|---|---|---|")
    for name, failed in (
        ("lexkb (rules, then the support model)", shipped_failed),
        ("lexkb without its model (rules, then word overlap)", overlap_failed),
    ):
        print(f"| {name} | {sum(failed.values()) / n:.3f} | {dict(failed)} |")
    for regime, counts in by_regime.items():
        print(
            f"shipped, {regime}: {counts[True] / sum(counts.values()):.3f} failed of {sum(counts.values())}"
        )


if __name__ == "__main__":
    main()
