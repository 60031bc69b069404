"""Hostile input, fuzzing and concurrent use, measured in one run.

    .venv/bin/python -m benchmarks.faults [--work benchmarks/out/faults] [--copies 3]
        [--long-line-mb 10] [--concurrency-seconds 90] [--deadline 2]
        [--serve-requests 20000] [--parts hostile,fuzz,concurrency,outbound,fairness,serve]

1. A hostile corpus: `--copies` copies of tests/support/hostile.py's folder (every fault kind, each copy
   with its own random bytes and good documents holding known sentences), built with
   `lexkb build --embedder none`. Reported: files tried, quarantined with a reason naming
   their real fault (the kind the generator expects), crashes, good sentences lost, and the
   slowest file's parse time and the largest worker's memory against the limits (measured by
   parsing every file again through transforms.reading.isolation, as the build does).
2. The fuzzers of tests/hostile/test_fuzz.py: examples run and failures.
3. Concurrency: two builders alternating two corpora into one root, four reader processes
   opening CURRENT and searching, and a pruner, all for `--concurrency-seconds`. Reported:
   builds that published or waited for the lock (and how long), reader errors, snapshots that
   fail verification afterwards. Then the SIGKILL-during-publish test's twenty kills.
4. Outbound: the LLM, Brave and Voyage clients against servers on 127.0.0.0/8 (tests/support/
   hostile_http.py): a redirect to another host (requests and keys that reached it), a silent
   and a trickling endpoint (1 byte per 0.5 s; seconds to give up against `--deadline`), each
   malformed reply (an error or a warning, never another exception), and a 200 MB reply
   (seconds, and the client's peak memory against its size limit).
5. MCP fairness (benchmarks/mcp_fairness.py): p50 and p99 of `search` over MCP on the sample
   index alone, and while 40 `ask` calls hang on an LLM endpoint that never answers; target:
   the p99 with the hung asks within 2x of the p99 alone.
6. What one client without a key can make `lexkb serve` hold (on the sample index at var/index,
   built there when missing): its RSS before and after `--serve-requests` requests, each to a
   distinct unknown path with a foreign Host (all 421), and /metrics' size, series of
   `lexkb_requests_total` and time after; then 12 connections each sending a 64 MB header at
   once: their replies, the RSS grown, and the slowest /healthz meanwhile. Then, on a
   PostgreSQL store (where Debian's server is installed), the seconds from `pg_ctl restart`
   until a keyed request is answered again, and what requests got while the server was
   stopped (503 with Retry-After) and after it started. And /api/v1/search's p50 and p99 for one
   key alone and while another key floods /api/v1/verify/citations from 32 connections: what the
   flood got (429 past the key's cost units in progress) and the slowest /healthz meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.support import hostile

REPO = Path(__file__).resolve().parent.parent


LEXKB = str(REPO / ".venv/bin/lexkb")
PYTHON = sys.executable


def hostile_corpus(work: Path, copies: int, long_line_mb: float) -> tuple[Path, dict[str, str]]:
    corpus = work / "corpus"
    if corpus.exists():
        shutil.rmtree(corpus)
    expected = {}
    for n in range(copies):
        folder = hostile.make(
            corpus / f"set{n}", work / "outside", long_line_mb, seed=100 + n, variant=f" {n}"
        )
        for name, kind in hostile.EXPECTED.items():
            expected[f"set{n}/{name}"] = kind
        del folder
    return corpus, expected


def build_hostile(work: Path, copies: int, long_line_mb: float) -> dict:
    from lexkb import Index
    from transforms.reading.file_limits import ParseLimits
    from transforms.reading.isolation import parse_all
    from transforms.reading.source_files import scan

    corpus, expected = hostile_corpus(work, copies, long_line_mb)
    root = work / "root"
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    run = subprocess.run(
        [LEXKB, "build", str(corpus), "--out", str(root), "--embedder", "none", "--json"],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    crashed = run.returncode != 0 or "Traceback" in run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1]) if run.stdout.strip() else {}
    quarantined = report.get("quarantined", {})
    index = Index.open(root)
    import polars as pl

    quarantine = pl.read_parquet(index.snapshot.table_path("quarantine"))
    kinds = dict(zip(quarantine["source_name"], quarantine["kind"], strict=True))
    bad = {name: kind for name, kind in expected.items() if kind is not None}
    right = sum(1 for name, kind in bad.items() if kinds.get(name) == kind)
    wrongly = sorted(name for name in kinds if expected.get(name) is None)
    sentences = [*hostile.GOOD_SENTENCES.values(), *hostile.ODD_SENTENCES.values()]
    lost = 0
    for sentence in sentences:
        hits = index.search(sentence, k=3 * copies, mode="keyword")
        found = sum(1 for hit in hits if sentence in " ".join(hit.text.split()))
        lost += max(0, copies - found)
    # Parse every file again through the build's own worker pool, to time each one.
    limits = ParseLimits()
    found_sources = scan([corpus]).sources
    jobs = [(source, work / "timing" / f"{n}.parquet") for n, source in enumerate(found_sources)]
    outcomes = parse_all(jobs, limits)
    slowest = max(outcomes, key=lambda o: o.seconds)
    files = sum(1 for p in corpus.rglob("*") if p.is_file() or p.is_symlink())
    return {
        "files": files,
        "bad_files": len(bad),
        "quarantined": len(quarantined),
        "quarantined_right": right,
        "wrongly_quarantined": wrongly,
        "crashes": int(crashed),
        "sentences": len(sentences) * copies,
        "sentences_lost": lost,
        "build_seconds": round(seconds, 1),
        "slowest_file": slowest.source.key,
        "slowest_seconds": round(slowest.seconds, 2),
        "timeout_limit": limits.timeout_seconds,
        "peak_worker_mb": round(max(o.peak_mb for o in outcomes), 1),
        "memory_limit_mb": limits.memory_mb,
    }


def fuzz() -> dict:
    run = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/hostile/test_fuzz.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    tail = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-300:]
    return {"fuzzers": 5, "examples": 5 * 200, "result": tail, "failures": int(run.returncode != 0)}


READER = """
import sys, time
from lexkb import Index
root, until = sys.argv[1], float(sys.argv[2])
ok = errors = 0
while time.time() < until:
    try:
        index = Index.open(root)
        index.search("client money reconciliation", k=5, mode="keyword")
        index.documents()
        index.get("LSA 230 8")
        ok += 1
    except Exception as exc:
        errors += 1
        print("ERROR", type(exc).__name__, exc, file=sys.stderr, flush=True)
print(ok, errors)
"""

PRUNER = """
import sys, time
from lexkb.core.store import index_root
root, until = sys.argv[1], float(sys.argv[2])
pruned = 0
while time.time() < until:
    try:
        pruned += len(index_root.prune(root, keep=1, lease_minutes=0.05).deleted)
    except Exception as exc:
        print("ERROR", type(exc).__name__, exc, file=sys.stderr, flush=True)
    time.sleep(2)
print(pruned)
"""


def concurrency(work: Path, seconds: float) -> dict:
    from lexkb.core.store import index_root
    from lexkb.core.store import snapshot as snap

    root = work / "concurrent-root"
    shutil.rmtree(root, ignore_errors=True)
    corpora = []
    for n in range(2):
        folder = work / f"concurrent-corpus-{n}"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(REPO / "examples" / "corpus", folder)
        (folder / "extra.md").write_text(f"# Extra {n}\n\n1. Build {n} adds this rule.\n")
        corpora.append(folder)
    subprocess.run([LEXKB, "build", str(corpora[0]), "--out", str(root), "--embedder", "none",
                    "--quiet"], check=True, capture_output=True)  # fmt: skip
    until = time.time() + seconds
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    readers = [
        subprocess.Popen([PYTHON, "-c", READER, str(root), str(until)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]  # fmt: skip
    pruner = subprocess.Popen([PYTHON, "-c", PRUNER, str(root), str(until)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    builds = {"published": 0, "unchanged": 0, "busy": 0, "failed": 0, "longest_wait_s": 0.0}

    def builder(index: int) -> subprocess.Popen:
        corpus = corpora[index % 2]
        return subprocess.Popen(
            [LEXKB, "build", str(corpus), "--out", str(root), "--embedder", "none", "--json",
             "--wait", "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    running = [(builder(0), time.time()), (builder(1), time.time())]
    count = 2
    while running:
        time.sleep(0.5)
        for item in list(running):
            process, started = item
            if process.poll() is None:
                continue
            running.remove(item)
            out = process.stdout.read().strip().splitlines()
            result = json.loads(out[-1]) if out else {}
            elapsed = time.time() - started
            if process.returncode == 0:
                builds["published" if result.get("published_new") else "unchanged"] += 1
            elif "another build holds" in result.get("error", ""):
                builds["busy"] += 1
            else:
                builds["failed"] += 1
            builds["longest_wait_s"] = max(builds["longest_wait_s"], round(elapsed, 1))
            if time.time() < until:
                running.append((builder(count), time.time()))
                count += 1
    reader_ok = reader_errors = 0
    messages = []
    for reader in readers:
        out, err = reader.communicate()
        ok, errors = map(int, out.split())
        reader_ok, reader_errors = reader_ok + ok, reader_errors + errors
        messages += err.strip().splitlines()[:3]
    pruned = int(pruner.communicate()[0].strip() or 0)
    corrupted = 0
    for version in index_root.versions(root):
        try:
            snap.load(root / "snapshots" / version, verify=True)
        except snap.SnapshotError:
            corrupted += 1
    sigkill = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/pipeline/test_publishing.py::test_sigkill_during_publishing_never_breaks_the_previous_snapshot"],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    return {
        "seconds": seconds,
        "builds": builds,
        "reader_queries": reader_ok,
        "reader_errors": reader_errors,
        "reader_error_examples": messages,
        "pruned": pruned,
        "corrupted_snapshots": corrupted,
        "sigkill_test": sigkill.stdout.strip().splitlines()[-1] if sigkill.stdout else "",
    }


def _outcome(call, patience: float) -> tuple[float, str]:
    """(seconds, what the call ended in: a warning, an error of lexkb's, another exception, or
    nothing yet after `patience` seconds)."""
    from lexkb.answers.external.llm import LLMError
    from lexkb.core.embed.embedders import EmbedderError
    from tests.support.hostile_http import call_within

    seconds, result = call_within(patience, call)
    if seconds == float("inf"):
        return patience, f"STILL RUNNING after {patience:g} s"
    if isinstance(result, LLMError | EmbedderError):
        return seconds, type(result).__name__
    if isinstance(result, BaseException):
        return seconds, f"EXCEPTION {type(result).__name__}"
    warnings = getattr(result, "warnings", None)
    return (
        seconds,
        f"{len(warnings)} warning(s)" if warnings else f"returned {type(result).__name__}",
    )


def outbound(deadline: float) -> list[str]:
    """The outbound section's table (see the module's docstring)."""
    import tracemalloc

    from lexkb.answers.external.llm import chat
    from lexkb.answers.external.web import web_search
    from lexkb.core.embed.embedders import VoyageEmbedder
    from tests.support import hostile_http as http

    keys = {name: f"{name.lower()}-must-stay-home" for name in ("LLM", "BRAVE", "VOYAGE")}
    saved = dict(os.environ)
    os.environ.update(LEXKB_LLM_API_KEY=keys["LLM"], BRAVE_API_KEY=keys["BRAVE"],
                      LEXKB_LLM_TIMEOUT=str(deadline))  # fmt: skip
    messages = [{"role": "user", "content": "How long are records kept?"}]

    def llm(server):
        os.environ["LEXKB_LLM_URL"] = f"{server.root}/v1"
        return chat(messages)

    calls = {
        "llm": llm,
        "brave": lambda s: web_search(["client money"], url=f"{s.root}/search", timeout=deadline),
        "voyage": lambda s: VoyageEmbedder(api_key=keys["VOYAGE"], base_url=f"{s.root}/v1",
                                           max_retries=0).embed_documents(["confidential"]),
    }  # fmt: skip

    def measure(reply, client: str) -> tuple[float, str]:
        with http.HostileServer(reply) as server:
            return _outcome(lambda: calls[client](server), 5 * deadline + 5)

    VoyageEmbedder(api_key=keys["VOYAGE"])  # loads the SDK before anything is timed
    rows = ["| case | client | seconds | outcome | note |", "| --- | --- | --- | --- | --- |"]
    try:
        for status in (302, 307):
            for client in calls:
                with http.HostileServer(http.json_reply(http.COMPLETION), http.OTHER_HOST) as other:
                    seconds, kind = measure(http.redirect(status, f"{other.root}/x"), client)
                arrived = sum(k in str(r.headers) for r in other.requests for k in keys.values())
                note = f"{len(other.requests)} requests, {arrived} keys reached the other host"
                rows.append(f"| redirect {status} | {client} | {seconds:.2f} | {kind} | {note} |")
        for name, reply in (("hang", http.hang), ("trickle 1 B/0.5 s", http.trickle(0.5))):
            for client in ("llm", "brave"):
                seconds, kind = measure(reply, client)
                rows.append(
                    f"| {name} | {client} | {seconds:.2f} | {kind} | deadline {deadline:g} s |"
                )
        for client, faults in (("llm", http.LLM_FAULTS), ("brave", http.WEB_FAULTS)):
            for name, reply in faults.items():
                if not name.startswith("oversized"):
                    seconds, kind = measure(reply, client)
                    rows.append(f"| malformed: {name} | {client} | {seconds:.2f} | {kind} | |")
        for client, limit in (("llm", 1_000_000), ("brave", 2_000_000)):
            reply = http.endless()
            tracemalloc.start()
            seconds, kind = measure(reply, client)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            note = (f"server handed over {reply.state['sent'] / 1e6:.1f} of 200 MB; client peak "
                    f"{peak / 1e6:.1f} MB for a limit of {limit / 1e6:.0f} MB")  # fmt: skip
            rows.append(f"| huge reply | {client} | {seconds:.2f} | {kind} | {note} |")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return rows


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _replies(port: int, data: bytes) -> str:
    """Send `data` on a new connection from a thread while reading here until the server
    closes it (30 s at most); the reply's status line."""
    import contextlib
    import socket
    import threading

    connection = socket.create_connection(("127.0.0.1", port))
    connection.settimeout(30)

    def send() -> None:
        with contextlib.suppress(OSError):  # refused and closed before it was all sent
            connection.sendall(data)

    threading.Thread(target=send, daemon=True).start()
    reply = b""
    with contextlib.suppress(OSError):  # a reset after the reply was read
        while chunk := connection.recv(65536):
            reply += chunk
    connection.close()
    return reply.split(b"\r\n", 1)[0].decode("latin-1") or "(closed without a reply)"


def serve_bounds(work: Path, requests: int) -> dict:
    """The serve section (see the module's docstring)."""
    import http.client
    import threading
    from collections import Counter

    from tests.support.serve_process import call, start

    index = REPO / "var" / "index"
    if not (index / "CURRENT").exists():
        subprocess.run([LEXKB, "build", str(REPO / "examples" / "corpus"), "--out", str(index),
                        "--quiet"], check=True, capture_output=True)  # fmt: skip
    store = work / "serve-bounds.db"
    store.unlink(missing_ok=True)
    served = start(index, store)
    try:
        pid = served.process.pid
        for _ in range(20):
            call(served, "GET", "/healthz")
        call(served, "GET", "/metrics")
        rss_before = _rss_mb(pid)
        statuses: Counter[int] = Counter()
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
        for n in range(requests):
            connection.request("GET", f"/{n}-{'A' * 56}", headers={"Host": "evil.example"})
            response = connection.getresponse()
            response.read()
            statuses[response.status] += 1
        connection.close()
        sent_seconds = time.perf_counter() - started
        rss_after = _rss_mb(pid)
        started = time.perf_counter()
        metrics = call(served, "GET", "/metrics").body
        metrics_seconds = time.perf_counter() - started
        series = sum(line.startswith("lexkb_requests_total{") for line in metrics.splitlines())
        head = b"GET /healthz HTTP/1.1\r\nHost: evil.example\r\nX-Big: " + b"a" * (64 << 20)
        head += b"\r\n\r\n"
        heads_before = _rss_mb(pid)
        replies: list[str] = []
        senders = [threading.Thread(target=lambda: replies.append(_replies(served.port, head)))
                   for _ in range(12)]  # fmt: skip
        started = time.perf_counter()
        for sender in senders:
            sender.start()
        slowest = 0.0
        while any(sender.is_alive() for sender in senders):
            asked = time.perf_counter()
            call(served, "GET", "/healthz")
            slowest = max(slowest, time.perf_counter() - asked)
            time.sleep(0.05)
        heads_seconds = time.perf_counter() - started
        heads_after = _rss_mb(pid)
    finally:
        served.stop()
    return {
        "requests": requests,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "requests_seconds": round(sent_seconds, 1),
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "rss_grown_mb": round(rss_after - rss_before, 1),
        "metrics_bytes": len(metrics.encode()),
        "metrics_seconds": round(metrics_seconds, 3),
        "request_series": series,
        "route_labels": len(set(re.findall(r'route="([^"]*)"', metrics))),
        "huge_heads": "12 x 64 MB",
        "huge_head_replies": dict(Counter(replies)),
        "huge_heads_seconds": round(heads_seconds, 2),
        "huge_heads_rss_grown_mb": round(heads_after - heads_before, 1),
        "slowest_healthz_meanwhile_s": round(slowest, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "faults")
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument("--long-line-mb", type=float, default=10.0)
    parser.add_argument("--concurrency-seconds", type=float, default=90.0)
    parser.add_argument("--deadline", type=float, default=2.0, help="outbound calls' deadline")
    parser.add_argument("--serve-requests", type=int, default=20_000,
                        help="requests to unknown paths in the serve section")  # fmt: skip
    parser.add_argument("--parts", default="hostile,fuzz,concurrency,outbound,fairness,serve",
                        help="the sections to run, comma-separated")  # fmt: skip
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    args.work.mkdir(parents=True, exist_ok=True)
    if "hostile" in parts:
        print("## Hostile corpus\n")
        print(json.dumps(build_hostile(args.work, args.copies, args.long_line_mb), indent=1))
    if "fuzz" in parts:
        print("\n## Fuzzers\n")
        print(json.dumps(fuzz(), indent=1))
    if "concurrency" in parts:
        print("\n## Concurrency\n")
        print(json.dumps(concurrency(args.work, args.concurrency_seconds), indent=1))
    if "outbound" in parts:
        print("\n## Outbound\n")
        print("\n".join(outbound(args.deadline)))
    if "fairness" in parts:
        from benchmarks.mcp_fairness import fairness, sample_index

        print("\n## MCP fairness\n")
        print(json.dumps(fairness(sample_index()), indent=1))
    if "serve" in parts:
        from benchmarks.serve_faults import serve_flood, serve_postgres_recovery

        print("\n## What one client can make lexkb serve hold\n")
        print(json.dumps(serve_bounds(args.work, args.serve_requests), indent=1))
        print("\n## lexkb serve: /api/v1/search while one key floods /api/v1/verify/citations\n")
        print(json.dumps(serve_flood(REPO / "var" / "index", args.work), indent=1))
        print("\n## lexkb serve on PostgreSQL: recovery after the server restarts\n")
        print(json.dumps(serve_postgres_recovery(REPO / "var" / "index"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
