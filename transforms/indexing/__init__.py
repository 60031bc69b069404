"""What a search reads besides the tables: BM25 weights, embeddings with their cache, and
topic clusters."""
