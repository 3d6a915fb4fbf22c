"""The layers of the settings, as `flows.config` reads them itself (no pydantic-settings): the highest layer that sets
a value wins (a flag, then the environment, then the working directory's playbook.toml, then the user's own
config.toml), tables merge key by key, variables are read in any case, a list variable is split and a dict one is
JSON; and reading them costs a read command no import of pydantic-settings or asyncio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import ConfigError
from flows.config import Settings, load_settings
from tests.helpers import trust_config

LAYERS = ("own", "local", "env", "flag")  # lowest first
# Each example rewrites the files and variables of its own, in the test's temporary folder.
EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_config_folder: Path) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("PLAYBOOK_CONFIG", "PLAYBOOK_DB", "ANTHROPIC_BASE_URL", "PLAYBOOK_ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    own_config_folder.mkdir(parents=True, exist_ok=True)
    return tmp_path


def _place(
    key: str, values: dict[str, Any], here: Path, own_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """Set `key` in each layer `values` names (removing it from the others); the flags to pass."""
    for name, path in (("own", own_folder / "config.toml"), ("local", here / "playbook.toml")):
        path.unlink(missing_ok=True)
        if name in values:
            path.write_text(_toml(key, values[name]))
            if name == "local":
                trust_config(path)  # every key of it applies (trust is tests/flows/test_trust.py's matter)
    monkeypatch.delenv(f"PLAYBOOK_{key.upper()}", raising=False)
    if "env" in values:
        env = values["env"]
        monkeypatch.setenv(f"PLAYBOOK_{key.upper()}", json.dumps(env) if isinstance(env, dict) else str(env))
    return {key: values["flag"]} if "flag" in values else {}


def _toml(key: str, value: Any) -> str:
    """`key = value` in TOML: a number, or a table of tables of numbers."""
    if not isinstance(value, dict):
        return f"{key} = {value}\n"
    tables = [f"[{key}.{k}]\n" + "".join(f"{j} = {v}\n" for j, v in inner.items()) for k, inner in value.items()]
    return "".join(tables) or f"{key} = {{}}\n"


@EXAMPLES
@given(values=st.dictionaries(st.sampled_from(LAYERS), st.integers(1, 10_000)))
def test_a_setting_takes_its_value_from_the_highest_layer_that_sets_it(
    values: dict[str, int], here: Path, own_config_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = _place("max_entries", values, here, own_config_folder, monkeypatch)
    highest = next((values[layer] for layer in reversed(LAYERS) if layer in values), None)
    expected = Settings.model_fields["max_entries"].default if highest is None else highest
    assert load_settings(**flags).max_entries == expected
    assert Settings(**flags).max_entries == expected  # built directly: the same layers


TABLES = st.dictionaries(
    st.sampled_from("abc"), st.dictionaries(st.sampled_from("xyz"), st.integers(-5, 5), max_size=3), max_size=3
)


@EXAMPLES
@given(values=st.dictionaries(st.sampled_from(LAYERS), TABLES))
def test_tables_merge_key_by_key_the_highest_layer_winning_each_key(
    values: dict[str, dict[str, dict[str, int]]], here: Path, own_config_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = _place("storage_options", values, here, own_config_folder, monkeypatch)
    got = load_settings(**flags).storage_options
    paths = {(k, j) for table in values.values() for k, inner in table.items() for j in inner}
    for k, j in paths:
        highest = next(values[layer][k][j] for layer in reversed(LAYERS) if j in values.get(layer, {}).get(k, {}))
        assert got[k][j] == highest
    assert set(got) == {k for table in values.values() for k in table}
    assert all(set(got[k]) == {j for kk, j in paths if kk == k} for k in got)  # nothing added


def test_a_variable_is_read_in_any_case_and_of_two_aliases_the_first_set_wins(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("anthropic_base_url", "http://second")
    assert load_settings().anthropic_base_url == "http://second"
    monkeypatch.setenv("Playbook_Anthropic_Base_Url", "http://first")
    assert load_settings().anthropic_base_url == "http://first"
    assert load_settings(anthropic_base_url="http://flag").anthropic_base_url == "http://flag"
    monkeypatch.setenv("playbook_wait_s", "7")
    assert load_settings().wait_s == 7.0


def test_every_list_setting_splits_its_variable(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lists = [name for name, field in Settings.model_fields.items() if get_origin(field.annotation) is list]
    assert lists  # the test sees the list settings there are
    for name in lists:
        monkeypatch.setenv(f"PLAYBOOK_{name.upper()}", "alpha,beta")
    got = load_settings()
    for name in lists:
        assert [Path(str(v)).name for v in getattr(got, name)] == ["alpha", "beta"], name


@pytest.mark.parametrize("value", ["cheap", "", "{1: 2}"])
def test_a_dict_variable_that_is_not_json_is_one_line_naming_it_however_the_settings_are_built(
    value: str, here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("playbook_storage_options", value)
    expected = r"^`PLAYBOOK_STORAGE_OPTIONS` is not JSON \(.+\); write it as a JSON object or unset it\.$"
    with pytest.raises(ConfigError, match=expected):
        load_settings()
    with pytest.raises(ConfigError, match=expected):
        Settings()


@pytest.mark.slow
def test_reading_the_settings_imports_neither_pydantic_settings_nor_asyncio(here: Path) -> None:
    # pydantic-settings imports asyncio and every source it offers: ~20 ms of CPU a read command does not need
    probe = (
        "import sys\n"
        "from flows.config import load_settings\n"
        "load_settings()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic_settings', 'asyncio', 'dotenv'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=here)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_variable_the_docs_tell_users_to_set_is_read_without_an_error(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`PLAYBOOK_MCP_SESSION` (docs/delivery.md: the session id an MCP client gives the server) made `playbook mcp`
    without `--db` fail with "Unknown environment variable": a variable the docs name is a setting or one of ours."""
    import re

    docs = Path(__file__).parents[2] / "docs"
    named = {
        v for page in docs.glob("*.md") for v in re.findall(r"`(PLAYBOOK_[A-Z][A-Z_]*[A-Z])[`=]", page.read_text())
    }
    assert "PLAYBOOK_MCP_SESSION" in named
    named.discard("PLAYBOOK_CONTRACTS")  # docs/contracts.md names a constant of core/playbook_json.py, no variable
    for variable in sorted(named):
        if variable.lower().removeprefix("playbook_") in Settings.model_fields:
            continue
        monkeypatch.setenv(variable, "s-1")
        try:
            load_settings()
        except ConfigError as exc:  # a value this test made up may be wrong (PLAYBOOK_CONFIG names no file)
            assert "Unknown environment variable" not in str(exc), exc
        monkeypatch.delenv(variable)
