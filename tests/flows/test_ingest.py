"""`playbook ingest` with nothing new loads none of what only new text needs (the redactor and its rules, the
secret pass over a batch, the shell grammar, the hasher, Rich into a pipe, a team's or the hooks' code, Prefect), and
prints what it printed before; a file that then grows is read again, and the secret it gained is redacted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.helpers import ROOT, SAMPLES

pytestmark = pytest.mark.slow  # each run is a process of its own

# Modules a re-ingest with nothing new has no use for.
HEAVY = (
    "core.redact",
    "core.secret_rules",
    "core.store.batch_redaction",
    "core.actions",
    "xxhash",
    "rich",
    "flows.team",
    "flows.delivery.hook",
    "prefect",
)
# The `playbook` command in a process of its own, naming on the way out which of HEAVY it loaded.
PROBE = (
    "import atexit, sys\n"
    "heavy = %r\n"
    "atexit.register(lambda: print('LOADED', sorted(h for h in heavy if any(m == h or m.startswith(h + '.')"
    " for m in sys.modules)), file=sys.stderr))\n"
    "from flows.cli import main\n"
    "sys.argv = ['playbook', *%r]\n"
    "main()\n"
)
SECRET = "sk-ant-api03-" + "Zq7XwP2mVr9LkT4bN8cY1dHs6FgJ3aUe0RiOyE5t"


def _ingest(source: Path, db: Path) -> tuple[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY, ["ingest", str(source), "--db", str(db)])],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=db.parent,
        env={"PATH": "/usr/bin:/bin", "HOME": str(db.parent), "PYTHONPATH": str(ROOT)},  # no settings of the user
    )
    assert done.returncode == 0, done.stderr
    (said,) = [line for line in done.stderr.splitlines() if line.startswith("LOADED")]
    return done.stdout, json.loads(said.removeprefix("LOADED ").replace("'", '"'))


def _row(printed: str, label: str) -> str:
    (line,) = [line for line in printed.splitlines() if line.startswith(f"│ {label} ")]
    return line.split("│")[2].strip()


def test_a_reingest_with_nothing_new_loads_nothing_it_does_not_need(tmp_path: Path) -> None:
    source = tmp_path / "projects"
    shutil.copytree(SAMPLES / "claude-code" / "spotter", source)
    db = tmp_path / "p.duckdb"
    first, loaded = _ingest(source, db)
    assert _row(first, "files new") == "4" and {"core.redact", "xxhash"} <= set(loaded)  # the probe sees them

    again, loaded = _ingest(source, db)
    assert loaded == []
    assert (_row(again, "files new"), _row(again, "files changed"), _row(again, "files unchanged")) == ("0", "0", "4")
    assert again.splitlines()[0] == "Ingest" and again.splitlines()[1].startswith("┌")  # the table Rich draws

    grown = source / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    last = json.loads(grown.read_text().splitlines()[-1])
    said = {
        "type": "user",
        "sessionId": last["sessionId"],
        "uuid": "0f7d9a52-3c4e-4b8a-9d1e-6a2b5c8e7f01",
        "parentUuid": last.get("uuid"),
        "timestamp": last["timestamp"],
        "message": {"role": "user", "content": f"my key is {SECRET}, use it"},
    }
    with grown.open("a") as fh:
        fh.write(json.dumps(said) + "\n")
    changed, loaded = _ingest(source, db)
    assert _row(changed, "files changed") == "1" and int(_row(changed, "secrets redacted")) >= 1
    assert {"core.redact", "xxhash"} <= set(loaded)
    with duckdb.connect(str(db), read_only=True) as con:
        texts = [r[0] for r in con.execute("SELECT text FROM messages WHERE text LIKE '%my key is%'").fetchall()]
    assert texts and all(SECRET not in t and "[REDACTED" in t for t in texts)
