-- One row per document: how it cites and is cited. An auditor reads this to see which texts a
-- document leans on, how many of its citations could not be followed, and which of its
-- paragraphs the rest of the corpus points at most.
with outgoing as (
    select
        source_document_id as document_id,
        count(*) as citations,
        count(*) filter (where reference_type = 'internal') as internal_edges,
        count(*) filter (where reference_type = 'external') as external_edges,
        count(*) filter (where reference_type = 'outside') as outside_references,
        count(*) filter (where reference_type = 'unresolved') as unresolved_references,
        count(*) filter (where match = 'enclosing') as resolved_to_enclosing_unit,
        count(distinct target_document_id) filter (where reference_type = 'external')
            as documents_cited
    from {{ ref('stg_edges') }}
    group by 1
),

incoming as (
    select
        target_document_id as document_id,
        count(*) as cited_by_other_documents
    from {{ ref('stg_edges') }}
    where reference_type = 'external'
    group by 1
),

most_cited as (
    select
        c.document_id,
        c.ref,
        count(*) as times_cited,
        row_number() over (
            partition by c.document_id order by count(*) desc, c.ref
        ) as rank
    from {{ ref('stg_edges') }} as e
    inner join {{ ref('stg_chunks') }} as c on c.chunk_id = e.target_chunk_id
    group by c.document_id, c.ref
)

select
    d.document_id,
    d.document_key,
    d.title,
    d.chunk_count as paragraphs,
    coalesce(o.citations, 0) as citations,
    coalesce(o.internal_edges, 0) as internal_edges,
    coalesce(o.external_edges, 0) as external_edges,
    coalesce(o.outside_references, 0) as outside_references,
    coalesce(o.unresolved_references, 0) as unresolved_references,
    coalesce(o.resolved_to_enclosing_unit, 0) as resolved_to_enclosing_unit,
    coalesce(o.documents_cited, 0) as documents_cited,
    coalesce(i.cited_by_other_documents, 0) as cited_by_other_documents,
    case
        when coalesce(o.internal_edges + o.external_edges + o.unresolved_references, 0) = 0
            then null
        else round(
            (o.internal_edges + o.external_edges)
            / (o.internal_edges + o.external_edges + o.unresolved_references),
            4
        )
    end as resolution_rate,
    m.ref as most_cited_ref,
    m.times_cited as most_cited_times
from {{ ref('stg_documents') }} as d
left join outgoing as o on o.document_id = d.document_id
left join incoming as i on i.document_id = d.document_id
left join most_cited as m on m.document_id = d.document_id and m.rank = 1
