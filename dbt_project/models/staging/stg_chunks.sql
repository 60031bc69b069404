select
    chunk_id,
    document_id,
    section_id,
    chunk_level,
    ref,
    length(content) as content_chars,
    page
from {{ source('lexkb', 'chunks') }}
