-- The catalog of indexed texts that `Index.documents()` serves: each document's number (its
-- short name, or the code its title starts with, such as "LSA 230"), title, version and size.
-- The build exports it as standards.parquet beside the other tables (transforms.publishing.dbt_sources), so
-- it is published in the snapshot.
select
    document_id,
    document_key,
    coalesce(
        short_name,
        nullif(regexp_extract(title, '^([A-Za-z]{2,8}\s*\d+[A-Za-z]?)\b', 1), ''),
        document_key
    ) as number,
    title,
    version,
    chunk_count as paragraph_count,
    section_count,
    page_count
from {{ ref('stg_documents') }}
order by document_key
