"""The seeds' API, for users of the hook scripts: the playbook.json dict functions (`core.compat.playbook`,
re-exported here) and the LLM functions `extract_keypoints`, `run_reflector`, `run_curator` (`core.compat.llm`,
imported on their own: they load a provider)."""

from core.compat.playbook import (
    SECTION_SLUGS,
    apply_structured_operations,
    extract_json,
    format_playbook,
    generate_keypoint_name,
    load_playbook,
    prune_harmful,
    save_playbook,
    update_playbook_data,
)

__all__ = [
    "SECTION_SLUGS",
    "apply_structured_operations",
    "extract_json",
    "format_playbook",
    "generate_keypoint_name",
    "load_playbook",
    "prune_harmful",
    "save_playbook",
    "update_playbook_data",
]
