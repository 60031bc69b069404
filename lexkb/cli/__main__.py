"""`python -m lexkb.cli`, the same as the `lexkb` command."""

from lexkb.cli.main import run

run()
