"""A copy of the sample index root and of its corpus with one more document, for the tests that
publish a second snapshot under a running server and check that it is served."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import CORPUS

NOTICE = "# Zephyrine Notice\n\n## 1 Scope\n\n1.1 A firm must file the zephyrine return within 14 days.\n"


def root_and_grown_corpus(built_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(an index root holding the built snapshot, a corpus that adds the Zephyrine Notice)."""
    root = tmp_path / "root"
    shutil.copytree(built_root / "snapshots", root / "snapshots")
    shutil.copy(built_root / "CURRENT", root / "CURRENT")
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    (corpus / "notice.md").write_text(NOTICE, encoding="utf-8")
    return root, corpus
