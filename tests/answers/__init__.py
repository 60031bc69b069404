"""The assistant's tools: context, verification, evidence, ask, classification, web search."""
