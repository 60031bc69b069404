"""How legal text is read alike by the build and by queries: tokens for BM25, references
("Article 5(1)(e)", "Rule 4.3.1", "ISA 315.A2") and the citation grammar that finds them in
running text."""
