"""A contract's head against CUAD's lawyers: its name, parties and dates as lexkb reads them.

    .venv/bin/python -m benchmarks.contract_head [--data ../shared/data] [--show FIELD]

For each of CUAD's TXT contracts, the text is read into elements as `lexkb build` reads it
(transforms.reading.elements), and the build's own readers of a contract's head
(transforms.structure.contracts: `contract_title`, `preamble`, `renewal_term`;
lexkb.core.text.governing_law) give what a snapshot's `documents` row states. Each field is scored against the answer column lawyers
filled in `master_clauses-dev.csv`:
- name: the title equals CUAD's "Document Name" (case, quotes and spacing aside);
- parties: of CUAD's "Parties" (names before their defined roles), the share a party lexkb
  found names (recall), and of lexkb's parties the share naming one of CUAD's (precision); a
  name matches when one's words (without legal forms: Inc., LLC, ...) hold the other's;
- agreement date, effective date: the same day as CUAD's answer, over the contracts where CUAD
  gives one; "stated, none found" and "wrong day" counted apart (a wrong day misleads a reviewer
  more than none);
- governing law: the state or country CUAD names, over the contracts where it names one.

Baseline, same run: a reader of the first lines alone (the first line that names an agreement
as the name, the first date as both dates, no parties, the first "laws of X" as governing law).

Rules are code, not fitted numbers, but they were looked at on one half only: contracts are
halved by the SHA-256 of their key (`half`), rules were read against half "a" (`--show`), and
half "b" is the one to report. `--show FIELD` prints half a's misses of one field.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TypedDict

from evaluation_data.cuad import contract_key, squeeze
from lexkb.core.text.dates import find_date, find_numeric_date
from lexkb.core.text.governing_law import governing_law
from transforms.reading.elements import read_text, text_elements
from transforms.structure import contracts

REPO = Path(__file__).resolve().parent.parent
FIELDS = ("name", "parties", "agreement_date", "effective_date", "governing_law", "renewal_term")
# Legal forms and filler, dropped before names are compared.
_FORMS = re.compile(
    r"\b(?:inc|incorporated|llc|l\.l\.c|ltd|limited|corp|corporation|co|company|lp|l\.p|llp|plc"
    r"|n\.a|s\.a|gmbh|ag|b\.v|the|and|d/b/a)\b\.?",
    re.IGNORECASE,
)


class Head(TypedDict):
    """What a documents row states of a contract's head."""

    name: str | None
    parties: list[str]
    agreement_date: date | None
    effective_date: date | None
    governing_law: str | None
    renewal_term: str | None


def half(key: str) -> str:
    """'a' (rules were read against these) or 'b' (reported), by the key's hash."""
    return "a" if hashlib.sha256(key.encode()).digest()[0] % 2 == 0 else "b"


def answers(data: Path) -> dict[str, dict[str, str]]:
    """contract_key -> CUAD's answer per field (empty where lawyers marked none)."""
    columns = {
        "name": "Document Name-Answer",
        "parties": "Parties-Answer",
        "agreement_date": "Agreement Date-Answer",
        "effective_date": "Effective Date-Answer",
        "governing_law": "Governing Law-Answer",
        "renewal_term": "Renewal Term-Answer",
    }
    with (data / "cuad" / "master_clauses-dev.csv").open(encoding="utf-8") as handle:
        return {
            contract_key(row["Filename"]): {f: row[c].strip() for f, c in columns.items()}
            for row in csv.DictReader(handle)
        }


def cuad_day(answer: str) -> date | None:
    """CUAD's dates: "5/8/14", "2/10/2014", or written out ("June 1, 2019"); "[]/[]/2009" and
    other partial dates mean no one day."""
    found = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})", answer.strip())
    if found:
        month, day, year = (int(g) for g in found.groups())
        year += 0 if year >= 100 else (2000 if year < 50 else 1900)
        try:
            return date(year, month, day)
        except ValueError:
            return None
    written = find_date(answer)
    return written[0] if written else None


def cuad_parties(answer: str) -> list[str]:
    """CUAD's parties: "A ("Company"); B ("MA")" -> ["A", "B"]."""
    names = []
    for piece in answer.split(";"):
        name = re.sub(r"\([^)]*\)|\"[^\"]*\"|“[^”]*”", " ", piece)
        name = " ".join(name.split()).strip(" ,.")
        if name:
            names.append(name)
    return names


def _words(name: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", _FORMS.sub(" ", squeeze(name))))


def same_party(found: str, marked: str) -> bool:
    """One name's words hold the other's: "Mount Knowledge Holdings" is "MOUNT KNOWLEDGE
    HOLDINGS INC."; a name of one word ("Company") matches no party."""
    a, b = _words(found), _words(marked)
    if not a or not b or (len(a) == 1 and len(b) > 1 and a < b and len(next(iter(a))) < 4):
        return False
    return a <= b or b <= a


def same_name(found: str | None, marked: str) -> bool:
    def norm(text: str) -> str:
        return " ".join(re.findall(r"[a-z0-9]+", squeeze(text)))

    return bool(found) and norm(found or "") == norm(marked)


_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(year|month|day)", re.IGNORECASE)
_MONTHS_IN = {"year": 12.0, "month": 1.0, "day": 1 / 30}


def months(text: str | None) -> float | None:
    """A renewal's length in months ("successive 1 year" -> 12); None where none is written
    ("perpetual", a date)."""
    found = _SPAN.search(text or "")
    return float(found.group(1)) * _MONTHS_IN[found.group(2).casefold()] if found else None


def same_renewal(found: str | None, marked: str) -> bool:
    """The same length of renewal, however written ("12 months" is "1 year"); whether each
    renewal is "successive" is not scored, since CUAD's lawyers did not always say so."""
    wanted = months(marked)
    return wanted is not None and months(found) == wanted


def same_law(found: str | None, marked: str) -> bool:
    """CUAD's answer names the state or country ("Nevada", "New York", "England and Wales")."""
    if not found:
        return False
    a, b = _words(found), _words(marked)
    return bool(a) and (a <= b or b <= a)


def lexkb_head(texts: list[str]) -> Head:
    found = contracts.preamble(texts)
    return {
        "name": contracts.contract_title(texts),
        "parties": found["parties"],
        "agreement_date": found["agreement_date"],
        "effective_date": found["effective_date"],
        "governing_law": governing_law(texts),
        "renewal_term": contracts.renewal_term(texts),
    }


_FIRST_LAW = re.compile(r"laws\s+of\s+(?:the\s+)?(?:State\s+of\s+)?([A-Z][A-Za-z ]{2,30}?)[,.;)]")
_FIRST_RENEWAL = re.compile(r"renew[^.]{0,200}?(\d+)\)?\s*-?\s*(year|month)", re.IGNORECASE)


def baseline_head(texts: list[str]) -> Head:
    """The first lines alone: what a reader skimming the top would write down."""
    head = " ".join(texts[:40])
    written = find_date(head)
    day = written[0] if written else find_numeric_date(head)
    name = next((t for t in texts[:15] if "AGREEMENT" in t.upper() and len(t) < 120), None)
    whole = " ".join(texts)
    law = _FIRST_LAW.search(whole)
    renewal = _FIRST_RENEWAL.search(whole)
    return {
        "name": name,
        "parties": [],
        "agreement_date": day,
        "effective_date": day,
        "governing_law": law.group(1) if law else None,
        "renewal_term": f"{renewal.group(1)} {renewal.group(2)}" if renewal else None,
    }


def score(heads: dict[str, Head], truth: dict[str, dict[str, str]]) -> dict[str, object]:
    """Each field's figures over the contracts `heads` holds."""
    tally: Counter[str] = Counter()
    for key, head in heads.items():
        marked = truth[key]
        tally["contracts"] += 1
        if marked["name"]:
            tally["name n"] += 1
            tally["name right"] += same_name(head["name"], marked["name"])
        wanted = cuad_parties(marked["parties"])
        got = head["parties"]
        tally["parties marked"] += len(wanted)
        tally["parties found right"] += sum(any(same_party(g, w) for g in got) for w in wanted)
        tally["parties given"] += len(got)
        tally["parties given right"] += sum(any(same_party(g, w) for w in wanted) for g in got)
        for field, found in (
            ("agreement_date", head["agreement_date"]),
            ("effective_date", head["effective_date"]),
        ):
            day = cuad_day(marked[field])
            if day is None:
                tally[f"{field} unstated, given"] += found is not None
                continue
            tally[f"{field} n"] += 1
            if found == day:
                tally[f"{field} right"] += 1
            elif found is None:
                tally[f"{field} none"] += 1
            else:
                tally[f"{field} wrong"] += 1
        if months(marked["renewal_term"]) is not None:
            tally["renewal n"] += 1
            tally["renewal right"] += same_renewal(head["renewal_term"], marked["renewal_term"])
        elif not marked["renewal_term"]:
            tally["renewal unstated, given"] += head["renewal_term"] is not None
        if marked["governing_law"]:
            tally["law n"] += 1
            tally["law right"] += same_law(head["governing_law"], marked["governing_law"])
    return {
        "contracts": tally["contracts"],
        "name": _share(tally["name right"], tally["name n"]),
        "parties recall": _share(tally["parties found right"], tally["parties marked"]),
        "parties precision": _share(tally["parties given right"], tally["parties given"]),
        **{
            f"{field.replace('_', ' ')}": (
                f"{_share(tally[f'{field} right'], tally[f'{field} n'])} "
                f"(wrong {tally[f'{field} wrong']}, none {tally[f'{field} none']})"
            )
            for field in ("agreement_date", "effective_date")
        },
        "governing law": _share(tally["law right"], tally["law n"]),
        "renewal term": _share(tally["renewal right"], tally["renewal n"])
        + f" (given where CUAD marks none: {tally['renewal unstated, given']})",
    }


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f} ({part}/{whole})" if whole else "-"


def read_heads(data: Path, reader: Callable[[list[str]], Head]) -> dict[str, Head]:
    """contract_key -> the head `reader` reads from the contract's elements."""
    heads = {}
    for path in sorted((data / "cuad" / "txt").glob("*.txt")):
        texts = text_elements(read_text(path))["text"].to_list()
        heads[contract_key(path.name)] = reader(texts)
    return heads


def right(field: str, head: Head, marked: str) -> bool | None:
    """Whether `head` gives CUAD's answer for `field`; None where CUAD states none."""
    if not marked:
        return None
    if field == "name":
        return same_name(head["name"], marked)
    if field == "parties":
        return all(any(same_party(g, w) for g in head["parties"]) for w in cuad_parties(marked))
    if field == "governing_law":
        return same_law(head["governing_law"], marked)
    if field == "renewal_term":
        return same_renewal(head["renewal_term"], marked)
    day = cuad_day(marked)
    found = head["agreement_date"] if field == "agreement_date" else head["effective_date"]
    return None if day is None else found == day


def show(field: str, heads: dict[str, Head], truth: dict[str, dict[str, str]]) -> None:
    """Half a's contracts where `field` is not CUAD's answer."""
    for key, head in heads.items():
        marked = truth[key][field]
        if half(key) == "a" and right(field, head, marked) is False:
            given = dict(head)[field]
            print(f"{key[:50]:50} | lexkb {given!r:60.60} | CUAD {marked[:90]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--show", choices=FIELDS)
    args = parser.parse_args()
    truth = answers(args.data)
    found = {"lexkb": read_heads(args.data, lexkb_head)}
    if args.show:
        show(args.show, found["lexkb"], truth)
        return
    found["first lines (baseline)"] = read_heads(args.data, baseline_head)
    for name, heads in found.items():
        for which in ("a", "b", "all"):
            chosen = {k: h for k, h in heads.items() if which == "all" or half(k) == which}
            print(f"{name}, half {which}: {score(chosen, truth)}")


if __name__ == "__main__":
    main()
