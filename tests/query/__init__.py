"""The query module: search in every mode, lookup by reference, the citation graph, filters, relevance, the dense path."""
