"""The snapshot format: its tables' schemas, one snapshot's files and manifest, the index root
that holds the versions and CURRENT, its lock, object-store roots, vector files and diffs. The
build writes through it and the query module reads through it, so both keep to one contract."""
