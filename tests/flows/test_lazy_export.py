"""An export screens only the entries its budget would take, through the real store: nothing held goes out, a held
entry makes room for the next in rank, the note says how many of those the budget would take were held, while an
export of the whole playbook and `held_entries` (what `playbook review` lists) still screen every entry."""

from __future__ import annotations

import json
from pathlib import Path

from core.models import Entry, Playbook
from core.store.db import open_db
from core.store.registry import ensure_playbook
from core.store.versions import write_version
from flows.config import Settings
from flows.delivery.exports import export_to
from flows.delivery.review import held_entries
from flows.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
LABELLED = json.loads((ROOT / "data" / "lessons" / "screen.json").read_text())


def test_an_export_screens_what_its_budget_takes_and_review_lists_every_held_entry(tmp_path: Path) -> None:
    hostile = [text for text, _ in LABELLED["hostile"][:6]]
    ordinary = LABELLED["ordinary"][:4]
    # Ranked first: five hostile entries (helpful 3); then the ordinary ones (1); last a hostile one (0).
    entries = [
        *[Entry(name=f"bad-{i}", text=t, helpful=3) for i, t in enumerate(hostile[:5])],
        *[Entry(name=f"ok-{i}", text=t, helpful=1) for i, t in enumerate(ordinary)],
        Entry(name="bad-99", text=hostile[5]),
    ]
    db = tmp_path / "p.duckdb"
    with open_db(db) as con:
        ensure_playbook(con, "default")
        write_version(con, "default", Playbook(sections={"OTHERS": entries}), source="import")
    ws = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", max_entries=2))

    held = [h.name for h in held_entries(ws, "default")]  # every entry read
    assert "bad-99" in held and len(held) >= 6
    ranked = [e.name for e in entries]  # by helpful, then the playbook's order: as the budget ranks them
    may_go = [name for name in ranked if name not in held]
    ahead = ranked[: ranked.index(may_go[1]) + 1]  # what the budget asked about until it was full

    budgeted = export_to(ws, "default", "json")
    assert budgeted.text is not None
    names = [e["name"] for items in json.loads(budgeted.text)["sections"].values() for e in items]
    assert names == may_go[:2]
    held_ahead = len([n for n in ahead if n in held])
    assert budgeted.note is not None
    assert f"{held_ahead} entries held by the screen among those the budget would take" in budgeted.note
    left_out = len(entries) - 2 - held_ahead
    assert f"{left_out} more entr{'y' if left_out == 1 else 'ies'} left out to fit the budget" in budgeted.note

    whole = export_to(ws, "default", "json", whole=True)
    assert whole.text is not None and whole.note is not None
    names = [e["name"] for items in json.loads(whole.text)["sections"].values() for e in items]
    assert names == may_go
    assert f"{len(held)} entries held by the screen (" in whole.note
