"""Where a setting comes from: a flag over the environment, over the working directory's playbook.toml (what of it
applies), over the user's own config.toml; tables merged key by key; a dict setting's variable is JSON. Merged by
`flows.config` itself (`Settings.__init__`), from the layers it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ConfigError
from flows.config import Settings, load_settings


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_config_folder: Path) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("PLAYBOOK_CONFIG", "PLAYBOOK_DB", "ANTHROPIC_API_KEY", "PLAYBOOK_ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    own_config_folder.mkdir(parents=True, exist_ok=True)
    return tmp_path


def test_a_flag_beats_the_environment_which_beats_the_files(
    here: Path, own_config_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (own_config_folder / "config.toml").write_text("max_entries = 7\nmax_tokens = 200\nbackups = 9\n")
    (here / "playbook.toml").write_text("max_entries = 6\nmax_tokens = 100\n")  # harmless keys: they apply
    monkeypatch.setenv("PLAYBOOK_MAX_ENTRIES", "5")
    monkeypatch.setenv("playbook_db", "env.duckdb")  # any case, as it always was read
    assert load_settings().db == Path("env.duckdb")
    got = load_settings(db=Path("flag.duckdb"))
    assert (got.db, got.max_entries, got.max_tokens, got.backups) == (Path("flag.duckdb"), 5, 100, 9)
    assert Settings(min_messages=1).backups == 9  # built directly: the same layers


def test_tables_merge_key_by_key_across_the_layers(
    here: Path, own_config_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (own_config_folder / "config.toml").write_text(
        '[playbook_settings.a]\nreview = "required"\n[playbook_settings.b]\nmax_entries = 3\n'
    )
    monkeypatch.setenv("PLAYBOOK_PLAYBOOK_SETTINGS", '{"a": {"max_tokens": 9}}')
    got = load_settings()
    assert (got.options("a").review, got.options("a").max_tokens, got.options("b").max_entries) == ("required", 9, 3)


def test_a_dict_settings_variable_is_json_and_a_list_settings_is_split(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLAYBOOK_PRICES", '{"m": [1, 2, 3, 4]}')
    monkeypatch.setenv("PLAYBOOK_PLAYBOOKS", "p,q")
    got = load_settings()
    assert (got.prices, got.playbooks) == ({"m": (1.0, 2.0, 3.0, 4.0)}, ["p", "q"])
    monkeypatch.setenv("PLAYBOOK_PRICES", "cheap")
    with pytest.raises(ConfigError, match=r"^`PLAYBOOK_PRICES` is not JSON \(.*\); write it as a JSON object"):
        load_settings()
    monkeypatch.setenv("PLAYBOOK_PRICES", "[1]")
    with pytest.raises(ConfigError, match=r"^Invalid value for `prices` in PLAYBOOK_PRICES: "):
        load_settings()


def test_the_key_is_read_from_either_variable_the_playbook_one_first(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k1")
    key = load_settings().anthropic_api_key
    assert key is not None and key.get_secret_value() == "k1"
    monkeypatch.setenv("PLAYBOOK_ANTHROPIC_API_KEY", "k2")
    key = load_settings().anthropic_api_key
    assert key is not None and key.get_secret_value() == "k2"
    assert Settings(anthropic_api_key=None).anthropic_api_key is None  # a flag by its name beats both
