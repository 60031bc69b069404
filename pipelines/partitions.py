import dagster as dg

# One partition per source file, keyed by its path relative to the source folder.
documents_partitions = dg.DynamicPartitionsDefinition(name="documents")
