-- A document's citations are exactly its edges of the four types.
select document_key
from {{ ref('graph_by_document') }}
where citations != internal_edges + external_edges + outside_references + unresolved_references
