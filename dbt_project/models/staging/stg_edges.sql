select
    source_chunk_id,
    target_chunk_id,
    source_document_id,
    target_document_id,
    reference_text,
    cited_document,
    reference_type,
    relation,
    match,
    weight
from {{ source('lexkb', 'edges') }}
