"""The project's I/O beyond DuckDB: files it writes (one atomic writer), the run lock, git (publish), object
storage (fsspec) and the names from other machines that become paths here."""
