"""Helpers the tests share: local fake servers, hostile inputs, ranking comparisons."""
