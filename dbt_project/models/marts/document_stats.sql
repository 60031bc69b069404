-- Per document: what the build made of it, to compare documents and builds at a glance.
select
    d.document_id,
    d.document_key,
    d.title,
    d.format,
    d.page_count,
    d.section_count,
    d.extraction_quality,
    count(*) filter (where c.chunk_level = 'paragraph') as paragraphs,
    count(*) filter (where c.chunk_level = 'section') as section_chunks,
    count(*) filter (where c.chunk_level = 'part') as parts,
    count(*) filter (where c.chunk_level = 'note') as notes,
    coalesce(sum(c.content_chars) filter (where c.chunk_level = 'paragraph'), 0)
        as paragraph_chars,
    median(c.content_chars) filter (where c.chunk_level = 'paragraph') as median_paragraph_chars,
    max(c.content_chars) filter (where c.chunk_level = 'paragraph') as longest_paragraph_chars
from {{ ref('stg_documents') }} as d
left join {{ ref('stg_chunks') }} as c on c.document_id = d.document_id
group by all
