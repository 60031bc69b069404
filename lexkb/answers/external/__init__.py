"""Calls to another machine, each optional and each through one bounded client: the LLM's
chat endpoint and Brave web search."""
