"""A settings file that came with a repository is not trusted: a cloned repository's `playbook.toml` cannot run its
own `claude_cli` or send transcripts to its own `openai_base_url` until the user runs `playbook trust` on that exact
file, and a change to the file untrusts it. Harmless keys apply all the same; the trust store is the user's own file
(`--list`, `--revoke`, `--json`), kept in its mode and never written through a planted link."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SAMPLES, git
from tests.servers import JsonHandler, chat_completion, serving

runner = CliRunner()


def cloned(tmp_path: Path, files: dict[str, str], executable: tuple[str, ...] = ()) -> Path:
    """A real repository holding `files`, committed and cloned with `git clone`: the clone, as a user gets it."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q")
    for name, text in files.items():
        (origin / name).write_text(text)
        if name in executable:
            (origin / name).chmod(0o755)
    git(origin, "add", ".")
    git(origin, "commit", "-qm", "a project with its settings")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    return tmp_path / "clone"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No settings from this machine: no key, no named settings file, no Prefect server, transcripts in an empty
    folder of the test's own."""
    for name in ("PLAYBOOK_CONFIG", "ANTHROPIC_API_KEY", "PLAYBOOK_ANTHROPIC_API_KEY", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PLAYBOOK_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    (tmp_path / "no-transcripts").mkdir()
    monkeypatch.setenv("PLAYBOOK_TRANSCRIPTS", str(tmp_path / "no-transcripts"))
    return tmp_path


def test_a_cloned_repository_runs_its_claude_cli_only_once_trusted_and_not_after_a_change(
    here: Path, own_config_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = here / "x.sh-ran"
    clone = cloned(
        here,
        {"playbook.toml": 'claude_cli = "./x.sh"\n', "x.sh": f"#!/bin/sh\necho ran >> '{marker}'\n"},
        executable=("x.sh",),
    )
    # The user's own config names their claude (none on this machine); the conftest's variable would hide both files.
    monkeypatch.delenv("PLAYBOOK_CLAUDE_CLI")
    own_config_folder.mkdir(parents=True)
    (own_config_folder / "config.toml").write_text('claude_cli = "playbook-test-no-claude"\n')
    monkeypatch.chdir(clone)
    db = str(here / "p.duckdb")

    done = runner.invoke(app, ["doctor", "--db", db])
    assert not marker.exists(), "doctor ran the cloned repository's script"
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert (
        "  `playbook.toml` is not trusted, so its `claude_cli` was ignored; if you wrote it, run"
        " `playbook trust playbook.toml`."
    ) in lines
    assert f"  `{own_config_folder / 'config.toml'}`: your own; every key applies." in lines
    assert done.stderr == ""  # doctor says it once, in its own lines
    report = json.loads(runner.invoke(app, ["doctor", "--db", db, "--json"]).stdout)
    assert [(c["standing"], c["ignored"]) for c in report["config"]] == [("own", []), ("untrusted", ["claude_cli"])]
    assert not marker.exists()

    trusted = runner.invoke(app, ["trust"])
    assert trusted.exit_code == 0, trusted.output
    assert trusted.stdout.startswith("Trusted `playbook.toml` (sha256 ")
    assert "its `claude_cli` apply now too" in trusted.stdout
    done = runner.invoke(app, ["doctor", "--db", db])
    assert marker.read_text() == "ran\n", "the trusted file's claude_cli was not honoured"
    assert "  `playbook.toml`: trusted; every key applies." in done.stdout.splitlines()

    marker.unlink()
    with (clone / "playbook.toml").open("a") as fh:
        fh.write("# one more line, pulled from upstream\n")
    done = runner.invoke(app, ["doctor", "--db", db])
    assert not marker.exists(), "a changed file stayed trusted"
    assert (
        "  `playbook.toml` changed since you trusted it, so its `claude_cli` was ignored; review it, then run"
        " `playbook trust playbook.toml`."
    ) in done.stdout.splitlines()


class Model:
    """An OpenAI-compatible `/v1/chat/completions` on loopback that counts what it is sent and answers in the
    schema (a diagnosis with no tags; a curation with no operations)."""

    def __init__(self) -> None:
        self.requests = 0
        model = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = self.body()
                model.requests += 1
                curator = str(body["messages"][0]["content"]).startswith("You are the Curator")
                text = {"reasoning": "r", "operations": []} if curator else {"analysis": "a", "bullet_tags": []}
                self.answer(chat_completion(json.dumps(text)))

            def do_GET(self) -> None:
                model.requests += 1
                self.send_error(404)

        self.handler = Handler
        self.url = ""


@pytest.fixture
def model() -> Iterator[Model]:
    served = Model()
    with serving(served.handler) as url:
        served.url = f"{url}/v1"
        yield served


@pytest.mark.slow
def test_an_untrusted_openai_base_url_is_sent_nothing_by_nightly_and_its_harmless_keys_apply(
    here: Path, model: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user's own transcripts, where Claude Code keeps them.
    projects = here / "claude-home" / "projects" / "-src-spotter"
    projects.mkdir(parents=True)
    shutil.copy(SAMPLES / "claude-code" / "spotter" / "short.jsonl", projects)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(here / "claude-home"))
    monkeypatch.delenv("PLAYBOOK_TRANSCRIPTS")
    for name, value in {"MIN_MESSAGES": "1", "MAX_RETRIES": "0", "NEAR_DUPLICATES": "off"}.items():
        monkeypatch.setenv(f"PLAYBOOK_{name}", value)
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(here / "out"))
    clone = cloned(
        here,
        {"playbook.toml": f'llm = "openai"\nopenai_base_url = "{model.url}"\nplaybooks = ["default", "web"]\n'},
    )
    monkeypatch.chdir(clone)

    done = runner.invoke(app, ["nightly", "--db", str(here / "first.duckdb")])
    assert done.exit_code == 0, done.output
    assert model.requests == 0, "an untrusted file's openai_base_url was sent transcripts"
    warnings = [line for line in done.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings == [
        "Warning: `playbook.toml` is not trusted, so its `llm` and `openai_base_url` were ignored; if you wrote it,"
        " run `playbook trust playbook.toml`."
    ]
    assert "Traceback" not in done.output
    # `playbooks` is harmless: the file's second playbook was curated and exported like the first.
    assert (here / "out" / "default.md").is_file() and (here / "out" / "web.md").is_file()

    assert runner.invoke(app, ["trust", "playbook.toml"]).exit_code == 0
    done = runner.invoke(app, ["nightly", "--db", str(here / "second.duckdb")])
    assert model.requests > 0, done.output  # the same file, once trusted, reaches the server: the check above can fail
    assert "Warning:" not in done.stderr


def test_other_commands_warn_in_one_line_and_the_file_cannot_move_the_database(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = here / "planted"
    config = here / "settings" / "team.toml"
    config.parent.mkdir()
    config.write_text(
        f'db = "{elsewhere / "p.duckdb"}"\nepoch_size = 3\n[playbook_settings.default]\nmax_entries = 2\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(config))
    monkeypatch.chdir(here)
    (here / "transcripts").mkdir()
    shutil.copy(SAMPLES / "claude-code" / "spotter" / "short.jsonl", here / "transcripts")
    done = runner.invoke(app, ["ingest", str(here / "transcripts"), "--json"])
    assert done.exit_code == 0, done.output
    json.loads(done.stdout)  # the warning stays off stdout
    assert done.stderr.splitlines() == [
        f"Warning: `{config}` is not trusted, so its `db` was ignored; if you wrote it, run `playbook trust {config}`."
    ]
    assert not elsewhere.exists() and (here / "data" / "playbook.duckdb").is_file()

    # A harmless key with a bad value is still one error naming it (it is read, not ignored).
    config.write_text('db = "x.duckdb"\nepoch_size = "lots"\n')
    done = runner.invoke(app, ["sessions"])
    assert done.exit_code == 1
    assert done.stderr.splitlines()[-1].startswith(f"Error: Invalid value for `epoch_size` in `{config}`")


def test_trust_list_and_revoke_as_a_user_expects(here: Path, own_config_folder: Path) -> None:
    config = here / "playbook.toml"
    config.write_text('out_dir = "exports"\n')
    listed = runner.invoke(app, ["trust", "--list"])
    assert (
        listed.exit_code == 0 and listed.stdout.strip() == "No file is trusted; trust one with `playbook trust FILE`."
    )
    assert runner.invoke(app, ["trust", "--list", "--json"]).stdout.strip() == "[]"

    done = runner.invoke(app, ["trust", str(config), "--json"])
    assert done.exit_code == 0, done.output
    record = json.loads(done.stdout)
    assert record["unlocked"] == ["out_dir"] and record["record"]["path"] == str(config.resolve())
    assert record["store"] == str(own_config_folder / "trusted.json")

    def states() -> list[tuple[str, str]]:
        return [(t["path"], t["state"]) for t in json.loads(runner.invoke(app, ["trust", "--list", "--json"]).stdout)]

    assert states() == [(str(config.resolve()), "trusted")]
    config.write_text('out_dir = "elsewhere"\n')
    assert states() == [(str(config.resolve()), "changed")]
    config.unlink()
    assert states() == [(str(config.resolve()), "missing")]

    revoked = runner.invoke(app, ["trust", "--revoke", str(config)])
    assert revoked.exit_code == 0 and "is no longer trusted; only its harmless keys apply." in revoked.stdout
    assert states() == []
    again = runner.invoke(app, ["trust", "--untrust", str(config), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["was_trusted"] is False

    missing = runner.invoke(app, ["trust", str(config)])
    assert missing.exit_code == 1
    assert (
        missing.stderr.strip()
        == f"Error: `{config}` is no file; pass the settings file to trust: `playbook trust FILE`."
    )
    config.write_text("dbb = 1\n")
    typo = runner.invoke(app, ["trust", str(config)])
    assert typo.exit_code == 1 and typo.stderr.startswith("Error: Unknown key `dbb`")
    assert runner.invoke(app, ["trust", "--list", str(config)]).exit_code == 2
    assert states() == []  # nothing a refused command touched


def test_the_trust_store_keeps_its_mode_and_a_planted_link_is_never_written_through(
    here: Path, own_config_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = here / "a.toml", here / "b.toml"
    first.write_text("concurrency = 2\n")
    second.write_text("concurrency = 3\n")
    assert runner.invoke(app, ["trust", str(first)]).exit_code == 0
    store = own_config_folder / "trusted.json"
    assert store.stat().st_mode & 0o777 == 0o600  # a new store: the user's alone
    store.chmod(0o640)
    assert runner.invoke(app, ["trust", str(second)]).exit_code == 0
    assert store.stat().st_mode & 0o777 == 0o640
    assert [r["path"] for r in json.loads(store.read_text())["trusted"]] == [str(first), str(second)]

    victim = here / "victim.txt"
    victim.write_text("not yours\n")
    store.unlink()
    store.symlink_to(victim)
    for args in (["trust", str(first)], ["trust", "--revoke", str(first)], ["trust", "--list"]):
        done = runner.invoke(app, args)
        assert done.exit_code == 1, args
        assert done.stderr.splitlines() == [
            f"Error: Trust store `{store}` is a symbolic link, so playbook neither reads nor writes it; remove it,"
            " then trust your files again with `playbook trust FILE`."
        ]
    # A command reading a settings file here says the same, in one line, and runs nothing.
    (here / "playbook.toml").write_text('claude_cli = "./x.sh"\n')
    monkeypatch.chdir(here)
    done = runner.invoke(app, ["sessions"])
    assert done.exit_code == 1 and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.output
    assert victim.read_text() == "not yours\n" and store.is_symlink()
    assert sorted(os.listdir(own_config_folder)) == ["trusted.json"]  # no temporary file left behind


def test_every_setting_off_the_allow_list_is_ignored_from_an_untrusted_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision is an allow-list: each setting not known harmless (a setting added later too) keeps the value it
    has without the file, whatever the file says; every harmless one is a real setting."""
    from core.trust import HARMLESS, HARMLESS_PER_PLAYBOOK
    from flows.config import PlaybookOptions, Settings, load_settings

    assert HARMLESS <= set(Settings.model_fields) and HARMLESS_PER_PLAYBOOK <= set(PlaybookOptions.model_fields)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    without = load_settings()
    for key in sorted(set(Settings.model_fields) - HARMLESS - {"playbook_settings"}):
        (tmp_path / "playbook.toml").write_text(f'{key} = "./planted"\n')
        found = load_settings()
        assert getattr(found, key) == getattr(without, key), key
        assert [(c.standing, c.ignored) for c in found.config_files] == [("untrusted", [key])]
    for key in sorted(set(PlaybookOptions.model_fields) - HARMLESS_PER_PLAYBOOK):
        (tmp_path / "playbook.toml").write_text(f'[playbook_settings.default]\n{key} = "./planted"\nmax_entries = 3\n')
        found = load_settings()
        assert found.options("default") == PlaybookOptions(max_entries=3), key
        assert found.config_files[0].ignored == [f"playbook_settings.default.{key}"]
    # Playbook names become file names: only plain ones apply.
    (tmp_path / "playbook.toml").write_text('playbooks = ["default", "../../.bashrc"]\nplaybook = "api"\n')
    found = load_settings()
    assert found.playbooks == without.playbooks and found.playbook == "api"
    assert found.config_files[0].ignored == ["playbooks"]


def test_a_settings_file_over_the_bound_is_one_line_and_is_not_read_whole(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cloned repository's `playbook.toml` was read whole before anything of it was judged: a planted file of
    gigabytes was as much memory. Past 1 MB (settings fit in a few KB) it is refused in one line, and left as it was."""
    repo = cloned(here, {"playbook.toml": "epoch_size = 3\n" + "# padding\n" * 110_000})
    config = repo / "playbook.toml"
    config.chmod(0o640)
    before = config.read_bytes()
    monkeypatch.chdir(repo)
    done = runner.invoke(app, ["sessions", "--db", str(here / "p.duckdb")])
    assert done.exit_code == 1 and "Traceback" not in done.output, done.output
    assert done.stderr.splitlines() == ["Error: `playbook.toml` is over 1 MB, more than settings need; fix the file."]
    assert config.read_bytes() == before and oct(config.stat().st_mode & 0o777) == "0o640"
    assert not (here / "p.duckdb").exists()
