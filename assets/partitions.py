import dagster as dg

# One partition per source file, keyed by its path relative to the source folder.
documents_partitions = dg.DynamicPartitionsDefinition(name="documents")

# Every job that writes an index root carries this tag; dagster_home/dagster.yaml lets one such
# run go at a time, so the source sensor's runs queue instead of racing for the root.
WRITER_TAGS = {"lexkb/writer": "index"}
