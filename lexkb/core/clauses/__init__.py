"""Contract clause types: lexkb's default types, CUAD's fitted heads, and the rule that decides
which paragraph takes which label, shared by the build's `clauses` table and `classify`."""
