"""The ground floor that the query module and the build both stand on.

It holds what both sides must agree on and nothing that belongs to either: the snapshot format
and its reading and writing (`store`), the text grammar that references, citations and tokens
follow (`text`), the embedders (`embed`) and the contract clause types with their fitted heads
(`clauses`). Nothing here imports the query module (the rest of `lexkb`), `transforms`,
`assets` or `pipelines`; docs/architecture.md draws the floors and tests/test_layering.py keeps
them so.
"""
