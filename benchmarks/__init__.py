"""Benchmarks: each module measures one part of lexkb on public data and prints its figures;
run one as `.venv/bin/python -m benchmarks.NAME` (BENCHMARKS.md has the results). What they may
import is held by tests/test_layering.py."""
