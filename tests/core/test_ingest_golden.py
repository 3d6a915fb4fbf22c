"""Ingest output is pinned: what a faster ingest stores must be exactly what the previous one stored.

The bundled samples, every layout fixture and a crafted file with bad lines are ingested into one database;
`messages`, `sessions`, `files` and `file_noise` are dumped in a canonical order (paths relative to the
input root, ingest times left out) and compared with digests recorded from the ingest before its speed-ups
(tests/data/ingest_golden.json). An intended change of what ingest stores regenerates the file:
`python tests/core/test_ingest_golden.py`, and the diff of that file goes in the same commit.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.store.db import open_db  # noqa: E402
from core.store.ingest import ingest  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "ingest_golden.json"
SAMPLES = ROOT / "data" / "samples"
LAYOUTS = ROOT / "tests" / "data" / "layouts"

# Per table: what varies between runs and machines (ingest time, file mtimes), left out of the dump.
TABLES = {
    # `seq` orders the records of a file (numbered within the file; over the batch's scan when the digests were
    # recorded), so it is compared as that order.
    "messages": "SELECT * EXCLUDE (seq, message_key),"
    " dense_rank() OVER (PARTITION BY source_path ORDER BY seq) AS seq_in_file,"
    " replace(message_key, source_path || ':' || seq, source_path || ':#' || seq_in_file) AS message_key"
    " FROM messages",
    "sessions": "SELECT * EXCLUDE (ingested_at) FROM sessions",
    "files": "SELECT * EXCLUDE (mtime, ingested_at) FROM files",
    "file_noise": "SELECT * FROM file_noise",
}


def _inputs(root: Path) -> Path:
    """Copy the inputs under `root` (so stored paths are the same wherever the checkout is) plus a bad file."""
    shutil.copytree(SAMPLES, root / "samples")
    shutil.copytree(LAYOUTS, root / "layouts")
    good = (SAMPLES / "claude-code" / "spotter" / "short.jsonl").read_bytes().splitlines(keepends=True)
    bad = root / "bad" / "0f0f0f0f-bad-lines.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(good[0] + b"{not json\n" + b"\xff\xfe invalid utf-8\n" + b"".join(good[1:]) + b'{"type": 3}\n')
    return root


def dump(root: Path, batch_bytes: int | None = None) -> dict[str, dict[str, object]]:
    """Row count and sha256 of each table's canonical dump after one ingest of the inputs under `root`."""
    with open_db(root / "golden.duckdb") as con:
        ingest(con, [_inputs(root)], **({"batch_bytes": batch_bytes} if batch_bytes else {}))
        out: dict[str, dict[str, object]] = {}
        for table, query in TABLES.items():
            rows = con.execute(f"{query} ORDER BY ALL").fetchall()
            text = json.dumps(rows, default=str).replace(str(root), "<root>")
            out[table] = {"rows": len(rows), "sha256": hashlib.sha256(text.encode()).hexdigest()}
        return out


@pytest.mark.slow
@pytest.mark.parametrize("batch_bytes", [None, 200_000], ids=["one batch", "many batches"])
def test_ingest_stores_what_it_stored_before(tmp_path: Path, batch_bytes: int | None) -> None:
    """In one batch, or in many (each normalised on a second connection while the one before is committed)."""
    expected = json.loads(GOLDEN.read_text())
    assert dump(tmp_path, batch_bytes) == expected


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps(dump(Path(tmp)), indent=2) + "\n")
    print(f"wrote {GOLDEN}")
