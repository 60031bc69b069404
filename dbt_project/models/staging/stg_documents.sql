select
    document_id,
    document_key,
    title,
    short_name,
    version,
    format,
    page_count,
    section_count,
    chunk_count,
    extraction_quality
from {{ source('lexkb', 'documents') }}
