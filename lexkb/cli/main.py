"""lexkb: build a citable index of legal, regulatory and standards documents, then search it,
look up references, follow citations and export documents, with a snapshot behind every answer;
format prompt context and verify generated answers against it; serve all of it over MCP, a
JSON API and a web page.

Only `build` loads the pipeline (Dagster, unstructured), and only `serve` and `mcp` the service
(lexkb_service, with its extra `serve`); every other command needs just the query module, so it
starts fast and works on a machine that only holds snapshots.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
from collections.abc import Callable

from lexkb import defaults
from lexkb.cli.answering import add_commands as add_ask_commands
from lexkb.cli.answers import add_commands as add_answer_commands
from lexkb.cli.build import cmd_build
from lexkb.cli.query import (
    add_filters,
    cmd_documents,
    cmd_export,
    cmd_get,
    cmd_hop,
    cmd_search,
    cmd_search_batch,
)
from lexkb.cli.service import add_commands as add_service_commands
from lexkb.cli.snapshots import cmd_snapshots
from lexkb.core import environment
from lexkb.core.embed.embedders import PROVIDERS
from lexkb.core.store.snapshot import SnapshotError
from lexkb.index import MODES
from lexkb.limits import DEFAULT_LIMITS


def _default_index() -> str:
    return environment.index_root() or "var/index"


INDEX_HELP = (
    "index root (follows CURRENT) or one snapshot folder; default $LEXKB_ROOT, else var/index "
    "(here: %(default)s)"
)


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default when it has one worth showing (not unset, not off)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "%(default)" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action) or text


def build_parser(running: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; `running`, the command about to run, has the service fill in its
    options when it is one of the service's (lexkb.cli.service)."""
    from lexkb import __version__

    parser = argparse.ArgumentParser(
        prog="lexkb",
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"lexkb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    formatter = _Formatter

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, formatter_class=formatter)

    def with_index(p: argparse.ArgumentParser, json_help: str = "print JSON") -> None:
        p.add_argument("--index", default=_default_index(), help=INDEX_HELP)
        p.add_argument("--json", action="store_true", help=json_help + " (docs/schemas/)")

    build = command("build", "parse sources and publish a snapshot under --out")
    build.add_argument(
        "sources",
        nargs="+",
        help="files or folders (PDF, DOCX, MD, TXT, HTML, JSON/JSONL, legal XML)",
    )
    build.add_argument("--out", required=True, help="index root: receives snapshots/ and CURRENT")
    build.add_argument(
        "--embedder",
        choices=PROVIDERS,
        default=None,
        help="dense vectors from: auto (Voyage AI when VOYAGE_API_KEY is set, else the local "
        "model), local, voyage, none (keyword only); unset: $LEXKB_EMBEDDER, else auto",
    )
    build.add_argument("--verbose", action="store_true", help="show the pipeline's full log")
    build.add_argument("--quiet", action="store_true", help="print only the result line")
    build.add_argument(
        "--timings", action="store_true", help="print the seconds each pipeline step took"
    )
    build.add_argument(
        "--wait", type=float, default=60.0, help="seconds to wait while another build holds --out"
    )
    build.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="follow symbolic links that lead out of the source folders (refused otherwise)",
    )
    build.add_argument(
        "--parts",
        type=int,
        default=None,
        metavar="CHUNKS",
        help="build in parts of at most CHUNKS chunks each and publish a sharded snapshot "
        "(docs/scaling.md); memory is then set by the part size, not the corpus",
    )
    build.add_argument("--json", action="store_true", help="print the result as JSON")
    build.set_defaults(func=cmd_build)

    search = command("search", "ranked paragraphs for a question, each a citation")
    search.add_argument("query")
    search.add_argument("-k", "--k", type=int, default=defaults.SEARCH_LIMIT, help="how many hits")
    search.add_argument(
        "--mode", choices=MODES, help="unset: hybrid when the index has vectors, else keyword"
    )
    search.add_argument(
        "--expand", action="store_true", help="let paragraphs the hits cite join the ranking"
    )
    search.add_argument("--full", action="store_true", help="print whole texts, not excerpts")
    add_filters(search)
    with_index(search)
    search.set_defaults(func=cmd_search)

    get = command(
        "get",
        "a paragraph by chunk id or reference ('Article 6(1)', 'Rule 4.3.1 of the Lexkb "
        "Rulebook', 'LSA 230, para. A8'), with how it matched",
    )
    get.add_argument("identifier")
    get.add_argument(
        "--accept-enclosing",
        action="store_true",
        help="exit 0 when only the nearest enclosing unit exists (exit 1 otherwise)",
    )
    with_index(get)
    get.set_defaults(func=cmd_get)

    hop = command("hop", "paragraphs reached along citations in both directions, with paths")
    hop.add_argument("identifier", help="chunk id or reference")
    hop.add_argument(
        "--max-hops",
        type=int,
        default=defaults.HOP_MAX_HOPS,
        help=f"edges at most (1 to {DEFAULT_LIMITS.max_hops})",
    )
    hop.add_argument(
        "--decay", type=float, default=defaults.DECAY, help="score kept per edge, in (0, 1]"
    )
    hop.add_argument("-k", "--k", type=int, default=defaults.HOP_LIMIT, help="how many paragraphs")
    with_index(hop)
    hop.set_defaults(func=cmd_hop)

    manage = command("snapshots", "list, verify, compare, roll back or prune an index's snapshots")
    manage.add_argument("action", choices=["list", "verify", "diff", "rollback", "prune"])
    manage.add_argument(
        "versions",
        nargs="*",
        help="rollback VERSION | diff OLD [NEW] | verify [VERSION]; a version may be CURRENT, "
        "previous, or a unique prefix",
    )
    manage.add_argument("--keep", type=int, default=5, help="prune: newest snapshots to keep")
    manage.add_argument("--show", type=int, default=10, help="diff: items listed per change")
    with_index(manage)
    manage.set_defaults(func=cmd_snapshots)

    documents = command("documents", "the indexed documents with their catalog entries")
    with_index(documents)
    documents.set_defaults(func=cmd_documents)

    export = command(
        "export", "one document as Markdown (headings, refs, pages) or as its section tree"
    )
    export.add_argument("document", help="document key, title or code")
    export.add_argument("--markdown", action="store_true", help="Markdown (the default)")
    export.add_argument("--out", help="write to this new file instead of stdout")
    export.add_argument(
        "--force", action="store_true", help="let --out replace an existing regular file"
    )
    with_index(export, "the section tree with its paragraphs as JSON")
    export.set_defaults(func=cmd_export)

    batch = command("search-batch", "run a JSONL file of {qid, query}; write hits as JSONL")
    batch.add_argument("--queries", required=True, help="input: one {qid, query} per line")
    batch.add_argument("--out", required=True, help="output: one {qid, mode, hits} per line")
    batch.add_argument("-k", "--k", type=int, default=defaults.SEARCH_LIMIT, help="hits per query")
    batch.add_argument("--mode", choices=MODES, help="unset: hybrid when the index has vectors")
    batch.add_argument("--expand", action="store_true", help="as search --expand")
    add_filters(batch)
    batch.add_argument("--index", default=_default_index(), help=INDEX_HELP)
    batch.set_defaults(func=cmd_search_batch)
    add_answer_commands(command, with_index)
    add_ask_commands(command, with_index)
    add_service_commands(command, with_index, running)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser(argv[0] if argv else None).parse_args(argv)
        command: Callable[[argparse.Namespace], int] = args.func
        return command(args)
    except (SnapshotError, ValueError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"lexkb: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`lexkb search ... | head`): stop quietly, and keep Python from
        # complaining when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run() -> None:
    """The `lexkb` command. After a build that published it leaves without the interpreter's
    teardown: freeing Dagster's, dbt's and the tables' objects one by one took 1.7 s of a 28 s
    rebuild, after the snapshot was published and fsynced and the report printed. Exit handlers
    still run; the build's worker processes were stopped (cmd_build)."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] == ["build"] and code == 0:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
