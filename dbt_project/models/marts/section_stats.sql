-- Per section: how many paragraphs sit directly in it and how long they are.
select
    s.section_id,
    d.document_key,
    s.section_number,
    s.title,
    s.level,
    s.start_page,
    count(c.chunk_id) as paragraphs,
    coalesce(sum(c.content_chars), 0) as paragraph_chars
from {{ ref('stg_sections') }} as s
inner join {{ ref('stg_documents') }} as d on d.document_id = s.document_id
left join {{ ref('stg_chunks') }} as c
    on c.section_id = s.section_id and c.chunk_level = 'paragraph'
group by all
