"""The surfaces people and programs use: the CLI and its JSON, the MCP server, the Dagster UI."""
