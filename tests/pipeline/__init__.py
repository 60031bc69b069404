"""The build: parsing, structure, contracts, the pipeline's assets and checks, dbt, publishing, object storage, Dask, automation."""
