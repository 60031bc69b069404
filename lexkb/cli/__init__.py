"""The `lexkb` command: one module per group of commands. `lexkb.cli.main` parses and
dispatches; `build` reaches the pipeline only through the named seam in `lexkb.cli.build`."""
