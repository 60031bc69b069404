"""The ground floor: tokens, references, the citation grammar, the embedders."""
