"""The evolution report's series, aggregated in SQL: the budget chart's totals equal the budget of each version as
exports count it, and a long history is counted in at most `MAX_BARS` periods."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.budget import entry_tokens
from core.models import Entry, Playbook
from core.store.analytics import MAX_BARS, MAX_POINTS, budget_use_sql, evolution_data
from core.store.db import open_db
from core.store.registry import ensure_playbook
from core.store.versions import load_version, write_version
from tests.helpers import long_history

TEXTS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=300).filter(str.strip)
# Each version: the texts of entries e-0..e-N (None: that entry is not in the version).
VERSIONS = st.lists(st.lists(st.none() | TEXTS, min_size=1, max_size=4), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(VERSIONS)
def test_the_budget_series_is_each_versions_budget_as_exports_count_it(versions: list[list[str | None]]) -> None:
    with open_db(":memory:") as con:
        ensure_playbook(con, "default")
        section = next(iter(load_version(con, "default").sections))
        for texts in versions:
            entries = [Entry(name=f"e-{i}", text=t) for i, t in enumerate(texts) if t is not None]
            write_version(con, "default", Playbook(sections={section: entries}), source="import")
        points = budget_use_sql(con, "default")
        for version, n, tokens in points:
            model = load_version(con, "default", version)
            assert (n, tokens) == (model.size(), sum(entry_tokens(e.text) for _, e in model.entries()))
        changed = {v for v, *_ in points}
        for version in range(1, len(versions) + 1):  # between change points, nothing changed
            if version not in changed:
                before = max((v for v in changed if v < version), default=None)
                expected = load_version(con, "default", before).size() if before is not None else 0
                assert load_version(con, "default", version).size() == expected


def _history(db: Path, versions: int) -> None:
    """`versions` versions one hour apart from 2026-01-01, the empty version 0 too."""
    long_history(db, versions)
    with open_db(db) as con:
        con.execute("UPDATE versions SET created_at = TIMESTAMPTZ '2026-01-01' WHERE version = 0")


def test_a_long_history_is_counted_in_at_most_max_bars_periods(tmp_path: Path) -> None:
    _history(tmp_path / "h.duckdb", 5000)  # 209 days: 30 weeks
    with open_db(tmp_path / "h.duckdb", read_only=True) as con:
        data = evolution_data(con, "default")
    periods = {p for p, *_ in data.ops_by_period}
    assert data.period == "week" and len(periods) <= MAX_BARS + 1  # a partial week at either end
    assert sum(n for *_, n in data.ops_by_period) == 5000  # every operation counted once
    assert len(data.prunes_by_period) <= MAX_BARS + 1 and sum(n for _, n in data.prunes_by_period) == 100


def test_a_short_history_is_counted_per_day(tmp_path: Path) -> None:
    _history(tmp_path / "h.duckdb", 100)  # 5 days
    with open_db(tmp_path / "h.duckdb", read_only=True) as con:
        data = evolution_data(con, "default")
    assert data.period == "day" and len({p for p, *_ in data.ops_by_period}) == 5


def test_a_long_history_draws_at_most_max_points_a_line_ending_at_the_newest_version(tmp_path: Path) -> None:
    _history(tmp_path / "h.duckdb", 5000)
    with open_db(tmp_path / "h.duckdb", read_only=True) as con:
        data = evolution_data(con, "default")
        newest = load_version(con, "default")
    for section, entries in newest.sections.items():
        points = [(v, n) for v, s, n in data.section_sizes if s == section]
        assert len(points) <= MAX_POINTS + 1 and points == sorted(points)
        assert (points[-1][1] if points else 0) == len(entries)  # the last point is the playbook as it is
    for name, history in data.counter_history.items():
        found = newest.find(name)
        assert found is not None and len(history) <= MAX_POINTS + 1
        assert history[-1][1:] == (found[1].helpful, found[1].harmful)
