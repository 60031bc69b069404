-- Every catalogued text has at least one paragraph (rows returned fail the test).
select document_key, paragraph_count
from {{ ref('standards') }}
where paragraph_count < 1
