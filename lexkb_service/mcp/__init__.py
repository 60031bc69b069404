"""lexkb's MCP server: the query module's tools for assistants, over stdio or HTTP."""
