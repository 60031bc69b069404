"""Reading source files: finding and fingerprinting them, what a run parses, the parse
workers and their limits, each format's reader into the element frame, and why a file is
left out."""
