select
    document_id,
    document_key,
    title,
    short_name,
    format,
    page_count,
    section_count,
    chunk_count,
    extraction_quality
from read_parquet('{{ var("snapshot_path") }}/documents.parquet')
