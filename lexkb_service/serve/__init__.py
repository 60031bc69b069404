"""lexkb serve: one process, one port, for assistants (MCP at /mcp), applications (the JSON API
at /api/v1) and people (the web page at /), on the snapshot CURRENT names.

What users write (API keys, conversations, answers with their traces, feedback) lives in a store of
its own (lexkb_service.serve.store: SQLite by default, PostgreSQL when given a URL), never in the
index root, which stays read-only.
"""
