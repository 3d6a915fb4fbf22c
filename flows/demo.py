"""`make demo`: a small end-to-end run of the curation core on a bundled playbook."""

from __future__ import annotations

from pathlib import Path

from core.compat import format_playbook, load_playbook, playbook_from_dict, playbook_to_dict, save_playbook
from core.models import CuratorOutput, ReflectorOutput
from core.operations import apply_session

OUT = Path("data/out")


def main() -> None:
    """Load a playbook, apply one session's reflector + curator output, print the report."""
    playbook = playbook_from_dict(load_playbook(Path("data/demo-playbook.json")))
    reflector = ReflectorOutput(
        analysis="The agent retried a failing pytest run without reading the error.",
        bullet_tags=[{"name": "pat-001", "tag": "helpful"}, {"name": "mis-001", "tag": "harmful"}],
    )
    curator = CuratorOutput(
        reasoning="Record the retry lesson, sharpen pat-001, merge the two duplicates.",
        operations=[
            {
                "type": "ADD",
                "text": "Read the first failing assertion before re-running tests.",
                "section": "mistakes to avoid",
            },
            {"type": "UPDATE", "target_id": "pat-001", "text": "Run the narrowest failing test first (pytest -x -k)."},
            {"type": "MERGE", "source_ids": ["oth-001", "oth-002"], "merged_text": "Use pathlib for all paths."},
            {"type": "DELETE", "target_id": "pat-999", "reason": "hallucinated id"},
        ],
    )
    result, report = apply_session(playbook, reflector, curator)
    print(report.summary())
    print()
    print(format_playbook(result))
    OUT.mkdir(parents=True, exist_ok=True)
    save_playbook(playbook_to_dict(result), OUT / "playbook.json")
    print(f"\nWrote {OUT / 'playbook.json'}")


if __name__ == "__main__":
    main()
