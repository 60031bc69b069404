"""From staged tables to a published snapshot: staging, the dbt project's runner and
sources, the Great Expectations suites and their worker, and the atomic publish."""
