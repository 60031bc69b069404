import dagster as dg

# One partition per source file, keyed by its path relative to the source folder. The name is
# what the instance's calls take: the definition's own `name` may be None to a type checker.
DOCUMENTS = "documents"
documents_partitions = dg.DynamicPartitionsDefinition(name=DOCUMENTS)

# Every job that writes an index root carries this tag; dagster_home/dagster.yaml lets one such
# run go at a time, so the source sensor's runs queue instead of racing for the root.
WRITER_TAGS = {"lexkb/writer": "index"}
