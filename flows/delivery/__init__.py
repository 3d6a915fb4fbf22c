"""Delivery: exports and their targets (CLAUDE.md, AGENTS.md, rules files), publishing (also through code
review), the SessionStart hook, and review before anything is published."""
