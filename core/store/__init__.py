"""DuckDB storage: schema and migrations, ingest, versioned playbooks, analytics."""

from __future__ import annotations

__all__: list[str] = []
