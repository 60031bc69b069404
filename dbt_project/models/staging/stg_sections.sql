select
    section_id,
    document_id,
    parent_id,
    section_number,
    title,
    level,
    start_page,
    end_page
from {{ source('lexkb', 'sections') }}
