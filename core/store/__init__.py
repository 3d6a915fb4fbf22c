"""DuckDB storage: schema and migrations, ingest, versioned playbooks, analytics."""
