"""27 kinds of planted secrets, and one cut across two blocks, reach no HTTP request, no table of the
database, no playbook entry, no export and no report. Checked twice: by the values themselves, and by an
independent scanner (Yelp's `detect-secrets`, its named detectors), which finds them in the raw lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import httpx2
import pytest
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import default_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from core.llm.claude import AnthropicProvider, make_client
from core.llm.pricing import CostCap
from core.redact import redact, redact_conversation, redact_parts
from core.store.db import open_db
from core.store.ingest import ingest
from flows.cli import app
from flows.config import Settings
from flows.delivery.exports import export_playbook
from flows.insight.evolution import write_evolution_report
from flows.models.providers import ProviderSpec
from flows.run.curation import run_curation
from flows.workspace import Workspace
from tests.helpers import SAMPLES, claude_session, message, write_session
from tests.secret_kinds import HELD_OUT, KINDS, NEW_SHAPES, SPLIT, SPLIT_MESSAGES, Planted
from tests.secret_oracle import findings as oracle_findings
from tests.servers import s3_server, use_s3

ALL = [*KINDS, *HELD_OUT, SPLIT]


def _windows(text: str, size: int = 400, overlap: int = 160) -> list[str]:
    # detect-secrets' allowlist check is slow on long lines; no secret here is longer than the overlap.
    lines = []
    for line in text.splitlines():
        lines += [line[i : i + size] for i in range(0, max(1, len(line) - overlap), size - overlap)]
    return lines


def named_findings(*texts: str) -> list[str]:
    """What detect-secrets' named detectors (not its noisy entropy ones) find, line by line."""
    with default_settings():
        return [
            s.type
            for text in texts
            for line in _windows(text)
            for s in scan_line(line)
            if "High Entropy" not in s.type and "[REDACTED" not in (s.secret_value or "")
        ]


def leaked(text: str) -> list[str]:
    return [p.kind for p in ALL if p.secret in text]


def record(i: int, kind: str, message: dict[str, Any]) -> str:
    return json.dumps(
        {
            "type": kind,
            "sessionId": "sec-1",
            "uuid": f"u{i}",
            "cwd": "/work/acme",
            "timestamp": f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}Z",
            "message": message,
        }
    )


def carried(texts: list[str], tag: str, user: str, assistant: str) -> list[str]:
    """Transcript lines carrying each text once, where transcripts carry them, in turn: a user prompt (`user` with
    the text), a tool input and its error output, assistant text (`assistant` with the text)."""
    lines: list[str] = []
    for i, text in enumerate(texts):
        where = i % 3
        if where == 0:
            lines.append(record(len(lines), "user", {"role": "user", "content": user.format(text)}))
        elif where == 1:
            tool = {"type": "tool_use", "id": f"{tag}t{i}", "name": "Bash", "input": {"command": text}}
            lines.append(record(len(lines), "assistant", {"role": "assistant", "id": f"{tag}m{i}", "content": [tool]}))
            result = {
                "type": "tool_result",
                "tool_use_id": f"{tag}t{i}",
                "is_error": True,
                "content": f"failed: {text}",
            }
            lines.append(record(len(lines), "user", {"role": "user", "content": [result]}))
        else:
            block = {"type": "text", "text": assistant.format(text)}
            lines.append(record(len(lines), "assistant", {"role": "assistant", "id": f"{tag}m{i}", "content": [block]}))
    return lines


def planted_session(path: Path) -> None:
    """Every kind once: in user prompts, tool results, tool inputs and assistant text; SPLIT in two blocks."""
    lines = carried([p.text for p in [*KINDS, *HELD_OUT]], "", "Try this: {}", "I found {} in the config.")
    head, tail = SPLIT.text.split("|")
    blocks = [{"type": "text", "text": head}, {"type": "text", "text": tail}]
    lines.append(record(len(lines), "assistant", {"role": "assistant", "id": "msplit", "content": blocks}))
    lines.append(record(len(lines), "user", {"role": "user", "content": "Never paste keys into the chat again."}))
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")


def test_every_kind_is_redacted_and_each_detector_agrees() -> None:
    for p in KINDS:
        clean, n = redact(p.text)
        assert n >= 1 and p.secret not in clean, p.kind
        assert redact(clean) == (clean, 0), p.kind  # idempotent: markers are never redacted again
        assert named_findings(clean) == [], p.kind
    assert all_findings(*(redact(p.text)[0] for p in [*KINDS, *HELD_OUT])) == []  # every plugin: 0 survive
    # The oracle is not blind: it finds these in the raw lines (17 of the 27, 6 of the 17 held out).
    assert len([p for p in KINDS if all_findings(p.text)]) >= 17
    assert len([p for p in HELD_OUT if all_findings(p.text)]) >= 6
    raw_found = [p.kind for p in KINDS if named_findings(p.text)]
    assert len(raw_found) >= 12, raw_found  # the scanner does see them in the raw lines
    parts, n = redact_parts(SPLIT.text.split("|"))
    assert n == 1 and SPLIT.secret[:14] not in "".join(parts) and SPLIT.secret[14:] not in "".join(parts)


@pytest.mark.parametrize(
    "text",
    [
        "docker  login -u me -p Wd8kQz2mPx4v registry.example.com",
        "podman\tlogin -u me -p Wd8kQz2mPx4v",
        "curl -u\tadmin:Wd8kQz2mPx4v https://api.example.com",
        "curl --user\nadmin:Wd8kQz2mPx4v https://api.example.com",
    ],
    ids=["two spaces", "a tab", "a tab after -u", "a newline after --user"],
)
def test_a_password_flag_after_any_whitespace_is_redacted(text: str) -> None:
    """A rule runs only on a text holding one of its triggers: `docker login` and `-u ` (one space) were triggers,
    so a tab or a second space hid the password from every path that redacts."""
    clean, n = redact(text)
    assert n == 1 and "Wd8kQz2mPx4v" not in clean


def all_findings(*texts: str) -> list[str]:
    """What detect-secrets finds with every plugin it has, the entropy ones included, as a scan of a file does
    (with each plugin's own limits and filters; `scan_line` reports every word's entropy instead)."""
    import tempfile

    from detect_secrets.core.scan import scan_file

    with tempfile.TemporaryDirectory() as tmp, default_settings():
        path = Path(tmp) / "lines.txt"
        path.write_text("\n".join(texts) + "\n")
        return [s.type for s in scan_file(str(path))]


@pytest.mark.parametrize("planted", HELD_OUT, ids=[p.kind for p in HELD_OUT])
def test_each_held_out_kind_is_redacted_and_no_scanner_plugin_finds_anything(planted: Planted) -> None:
    p = planted
    clean, n = redact(p.text)
    assert n >= 1 and p.secret not in clean, (p.kind, clean)
    assert redact(clean) == (clean, 0)
    assert all_findings(clean) == [], (p.kind, clean, all_findings(clean))


def test_a_run_masks_each_new_entry_text_once_and_never_skips_one() -> None:
    from core.models import Entry, Playbook
    from core.redact import Redactor, mask_playbook

    redactor = Redactor(home="/home/alice")
    clean: set[str] = set()
    plain = [Entry(name=f"oth-{i:03d}", text=f"Run the narrow test {i} first.") for i in range(1, 4)]
    first = Playbook(sections={"OTHERS": plain})
    assert mask_playbook(first, redactor, clean=clean) is first  # nothing to mask: the very same object
    assert clean == {e.text for e in plain}
    for n, p in enumerate(KINDS):  # a later session adds an entry that carries a secret: masked all the same
        grown = Playbook(sections={"OTHERS": [*plain, Entry(name=f"oth-{100 + n}", text=p.text)]})
        masked = mask_playbook(grown, redactor, clean=clean)
        assert p.secret not in masked.sections["OTHERS"][-1].text, p.kind
        assert masked.sections["OTHERS"][:3] == plain
    assert not any(p.secret in t for t in clean for p in KINDS)  # only texts that needed nothing are remembered


@pytest.mark.parametrize(
    "text",
    [
        "git checkout 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "/home/u/src/components/UserProfileSettingsPanelContainerWidget.tsx",
        "max_tokens: 4096",
        "export API_KEY=$OPENAI_API_KEY",
        "password: os.environ['PW']",
        "mkdir -p build && gcc -pthread -pedantic main.c",
        "mysql -u root -p appdb",
        '"tool_use_id": "toolu_01A9xk3LmQw7RtYu8PzVbN2c"',
        "ssh git@github.com:acme/app.git",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


@pytest.mark.slow
def test_no_secret_reaches_a_request_the_database_an_entry_an_export_or_the_report(tmp_path: Path) -> None:
    planted_session(tmp_path / "projects" / "-work-acme" / "sec-1.jsonl")
    settings = Workspace.of(Settings(db=tmp_path / "p.duckdb", out_dir=tmp_path / "out", min_messages=1))
    with open_db(settings.settings.db) as con:
        summary = ingest(con, [tmp_path / "projects"])
    assert summary.secrets >= len(ALL)
    bodies: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(request.content.decode())
        body = json.loads(request.content)
        if "operations" in json.dumps(body.get("output_config", {})):
            # A model that echoes secrets it never saw (or read elsewhere) into the lessons it writes.
            ops = [{"type": "ADD", "text": f"Do not reuse {p.secret} anywhere."} for p in ALL[:6]]
            text = json.dumps({"reasoning": f"key {SPLIT.secret}", "operations": ops})
        else:
            text = json.dumps({"analysis": "keys were pasted into the chat", "bullet_tags": []})
        return httpx2.Response(200, json=message(text, input_tokens=10, output_tokens=5))

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> AnthropicProvider:
        client = make_client(api_key="test-key", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        return AnthropicProvider(client, cost_cap=cap)

    model = ProviderSpec(kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5")
    assert run_curation(settings, "default", model, factory=factory).sessions_applied == 1
    assert len(bodies) == 2 and [leaked(b) for b in bodies] == [[], []]
    assert [named_findings(b) for b in bodies] == [[], []]

    # Every text column of every table, as DuckDB stores it.
    con = duckdb.connect(str(settings.settings.db), read_only=True)
    try:
        stored: list[str] = []
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall():
            columns = con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND data_type = 'VARCHAR'", [table]
            ).fetchall()
            for (column,) in columns:
                stored += [r[0] for r in con.execute(f'SELECT "{column}" FROM "{table}"').fetchall() if r[0]]
    finally:
        con.close()
    assert len(stored) > 100
    assert sorted({k for t in stored for k in leaked(t)}) == [], [t[:300] for t in stored if leaked(t)]
    assert named_findings(*stored) == []
    assert any("[REDACTED:" in t for t in stored) and any("Do not reuse" in t for t in stored)

    written = export_playbook(settings, "default")
    report = write_evolution_report(settings.settings.db, "default", tmp_path / "report", settings.settings.redactor())
    for path in [*written, report.index]:
        text = path.read_text()
        assert leaked(text) == [] and named_findings(text) == [], path


def test_keep_raw_text_stores_the_raw_text(tmp_path: Path) -> None:
    planted_session(tmp_path / "projects" / "-work-acme" / "sec-1.jsonl")
    with open_db(tmp_path / "p.duckdb") as con:
        summary = ingest(con, [tmp_path / "projects"], redact_secrets=False)
        texts = [r[0] for r in con.execute("SELECT text FROM messages WHERE text IS NOT NULL").fetchall()]
    assert summary.secrets == 0 and any(leaked(t) for t in texts)


# Runs of token characters around the 32 that `_random_token` needs, some random enough to be a key.
_TOKENS = st.from_regex(r"[A-Za-z0-9+/_\-]{24,48}={0,3}", fullmatch=True)
_PIECES = [p.text for p in KINDS] + [p.secret for p in KINDS] + [" ", "\xa0", "\n", "é", "\u212a", "Token", "-"]


@given(
    st.lists(
        st.lists(
            st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=12), _TOKENS), max_size=4).map("".join),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=6,
    ),
    st.randoms(use_true_random=False),
)
@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_ingest_stores_what_the_redactor_makes_of_every_record(
    tmp_path_factory: pytest.TempPathFactory, records: list[list[str]], rng: Any
) -> None:
    """Ingest hands the redactor only the records that may hold a secret; what it stores is exactly what the
    redactor makes of the prompts (`redact_conversation`), secrets cut anywhere, split across blocks and across
    messages, after any whitespace."""
    cut: list[list[str]] = []
    for blocks in records:  # cut some blocks again at a random point, so secrets straddle two blocks
        pieces: list[str] = []
        for b in blocks:
            inside = [(at, len(p.secret)) for p in KINDS if (at := b.find(p.secret)) >= 0]
            at, n = rng.choice(inside) if inside else (0, len(b))  # a cut inside a secret when there is one
            k = at + rng.randrange(1, n) if n > 1 else 0
            pieces += [b[:k], b[k:]] if k else [b]
        cut.append(pieces)
    root = tmp_path_factory.mktemp("prop")
    path = root / "sec-1.jsonl"
    lines = [  # prompts: a secret may be cut between two of them too
        record(i, "user", {"role": "user", "content": [{"type": "text", "text": b} for b in blocks]})
        for i, blocks in enumerate(cut)
    ]
    path.write_text("\n".join(lines) + "\n")
    with open_db(root / "db.duckdb") as con:
        ingest(con, [path])
        stored = con.execute("SELECT seq, part, text FROM messages ORDER BY seq, part").fetchall()
    got: dict[int, list[str]] = {}
    for seq, _, text in stored:
        got.setdefault(seq, []).append(text)
    assert list(got.values()) == redact_conversation(cut)[0]


def test_an_answer_quoting_a_header_stays_valid_json_and_is_applied(tmp_path: Path) -> None:
    """A model's answer quotes `"Authorization: Bearer $GITHUB_TOKEN"` and a real token inside JSON strings: it is
    redacted value by value, so it still parses, the session is applied in one run, and a rerun reuses it."""

    write_session(tmp_path / "t" / "s.jsonl", "b1", __import__("datetime").datetime(2026, 5, 1), error=True)
    settings = Workspace.of(
        Settings(db=tmp_path / "p.duckdb", out_dir=tmp_path / "out", min_messages=1, near_duplicates="off")
    )
    with open_db(settings.settings.db) as con:
        ingest(con, [tmp_path / "t"])
    token = "ghp_" + "Zq7" * 12
    calls: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        calls.append(body["system"][0]["text"][:40])
        if "operations" in json.dumps(body.get("output_config", {})):
            op = {
                "type": "ADD",
                "text": 'Send "Authorization: Bearer $GITHUB_TOKEN" from the environment, never a literal.',
            }
            text = json.dumps({"reasoning": f'it pasted "Authorization: Bearer {token}"', "operations": [op]})
        else:
            # A key cut short (no END line): redacted in the raw text, its marker would run to the end of the
            # answer, quotes and braces included.
            said = f'The agent sent "Authorization: Bearer {token}" and "Bearer $GITHUB_TOKEN"; it printed'
            said += " -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7"
            text = json.dumps({"analysis": said, "bullet_tags": []})
        return httpx2.Response(200, json=message(text, input_tokens=10, output_tokens=5))

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> AnthropicProvider:
        client = make_client(api_key="test-key", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        return AnthropicProvider(client, cost_cap=cap)

    model = ProviderSpec(kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5")
    summary = run_curation(settings, "default", model, factory=factory)
    assert summary.sessions_applied == 1 and summary.sessions_failed == 0 and len(calls) == 2
    with open_db(settings.settings.db) as con:
        raws = [r[0] for r in con.execute("SELECT raw_text FROM llm_calls ORDER BY created_at").fetchall()]
        texts = [r[0] for r in con.execute("SELECT text FROM entries WHERE valid_to IS NULL").fetchall()]
    assert all(json.loads(r) for r in raws) and not any(token in r for r in raws)
    assert "[REDACTED:github_token]" in raws[0] and "Bearer $GITHUB_TOKEN" in raws[0]
    assert "[REDACTED:private_key]" in raws[0] and "MIIE" not in raws[0]
    assert texts == ['Send "Authorization: Bearer $GITHUB_TOKEN" from the environment, never a literal.']


STOPPED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the"
    " new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to"
    " proceed."
)


def stopped_and_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commands: list[str], then: Sequence[tuple[str, object]] = ()
) -> None:
    """Two Claude Code sessions in which the user stops `make deploy` once per command and says `Always deploy with
    <command>` (Claude Code's own rejection text), then `then`; `nightly` runs on them without a key, into
    `tmp_path/p.duckdb`, exporting to `tmp_path/out`."""
    folder = tmp_path / "t"
    for n in range(2):
        turns: list[tuple[str, object]] = [("user", "deploy it")]
        for i, command in enumerate(commands):
            tid = f"s{n}-{i}"
            use = {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "make deploy"}}
            res = {"type": "tool_result", "tool_use_id": tid, "content": STOPPED, "is_error": True}
            turns += [("assistant", [use]), ("user", [res]), ("user", f"Always deploy with {command}")]
        turns += then
        claude_session(folder / f"s{n}.jsonl", f"s{n}", datetime(2026, 5, 1, tzinfo=UTC) + timedelta(days=n), turns)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    env = {"PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_NEAR_DUPLICATES": "off", "PLAYBOOK_OUT_DIR": str(tmp_path / "out")}
    db = str(tmp_path / "p.duckdb")
    done = CliRunner().invoke(app, ["nightly", str(folder), "--llm", "heuristic", "--db", db], env=env)
    assert done.exit_code == 0, done.output


@pytest.mark.slow
def test_the_rules_export_no_secret_of_the_held_out_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a key: the user stops a call and tells the agent what to run instead, pasting a command that carries
    `sshpass -p`, `curl -u`, a webhook URL or a database password, in two sessions; the rules quote the user, and
    neither the playbook nor an export holds the secret."""
    chosen = [p for p in HELD_OUT if p.kind in ("sshpass", "curl_user", "slack_webhook", "env_db_pass")]
    stopped_and_told(tmp_path, monkeypatch, [p.text for p in chosen])
    shown = CliRunner().invoke(app, ["show", "--db", str(tmp_path / "p.duckdb")]).stdout
    assert "[REDACTED:" in shown  # the rules did learn from those commands
    exported = "".join(p.read_text() for p in (tmp_path / "out").glob("*.*") if p.is_file())
    for p in chosen:
        assert p.secret not in shown and p.secret not in exported, p.kind
    assert all_findings(shown, exported) == []


# Issue 40's new shapes (private key blocks of any kind, signed URLs, registry credentials, passwords fed on stdin,
# `-pass pass:`, `-P`, `htpasswd -b`, `.pgpass`, passwords named in prose, base64 of `user:password`) and the secrets
# cut across two messages, through the CLI: absent from every table, from CLAUDE.md, and from what `push` uploads.


def _pieces(secret: str) -> list[str]:
    """What must not appear of a secret: itself, or each line of a key block."""
    return [line for line in secret.split("\n") if len(line) >= 6] or [secret]


def new_leaks(*texts: str) -> list[str]:
    found = [p.kind for p in NEW_SHAPES if any(piece in t for t in texts for piece in _pieces(p.secret))]
    found += [s.kind for s in SPLIT_MESSAGES if any(piece in t for t in texts for piece in s.secrets)]
    return found


def new_shapes_session(path: Path) -> None:
    """Each new shape once, where transcripts carry them (a user prompt; a tool input and its error output; assistant
    text), then each split secret as two user messages in a row, the agent answering after them."""
    lines = carried([p.text for p in NEW_SHAPES], "n", "Try this:\n{}", "I found this in the config:\n{}")
    for s in SPLIT_MESSAGES:
        lines.append(record(len(lines), "user", {"role": "user", "content": s.first}))
        lines.append(record(len(lines), "user", {"role": "user", "content": s.second}))
        answer = {"type": "text", "text": "Noted; I will not repeat it."}
        lines.append(
            record(len(lines), "assistant", {"role": "assistant", "id": f"nb{len(lines)}", "content": [answer]})
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def stored_texts(db: Path) -> list[str]:
    """Every VARCHAR value of every table, as DuckDB stores it."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored: list[str] = []
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall():
            columns = con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND data_type = 'VARCHAR'", [table]
            ).fetchall()
            for (column,) in columns:
                stored += [r[0] for r in con.execute(f'SELECT "{column}" FROM "{table}"').fetchall() if r[0]]
    finally:
        con.close()
    return stored


@pytest.mark.parametrize("planted", NEW_SHAPES, ids=[p.kind for p in NEW_SHAPES])
def test_each_new_shape_is_redacted_and_neither_oracle_finds_anything(planted: Planted) -> None:
    p = planted
    clean, n = redact(p.text)
    assert n >= 1 and new_leaks(clean) == [], (p.kind, clean)
    assert redact(clean) == (clean, 0)
    assert oracle_findings(clean) == [], (p.kind, clean)
    assert all_findings(clean) == [], (p.kind, clean, all_findings(clean))


def test_neither_oracle_is_blind_to_the_new_shapes() -> None:
    """The second oracle finds every new shape in its raw line; detect-secrets, written before most of them, finds
    5 (key blocks, a base64 run)."""
    assert [p.kind for p in NEW_SHAPES if not oracle_findings(p.text)] == []
    assert len([p for p in NEW_SHAPES if all_findings(p.text)]) >= 5
    assert len([p for p in [*KINDS, *HELD_OUT] if oracle_findings(p.text)]) >= 19  # and the older kinds


def test_no_new_shape_and_no_split_secret_is_stored_by_ingest(tmp_path: Path) -> None:
    new_shapes_session(tmp_path / "projects" / "-work-acme" / "sec-2.jsonl")
    db = tmp_path / "p.duckdb"
    done = CliRunner().invoke(app, ["ingest", str(tmp_path / "projects"), "--db", str(db), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["secrets_redacted"] >= len(NEW_SHAPES) + len(SPLIT_MESSAGES)
    stored = stored_texts(db)
    assert len(stored) > 50
    assert new_leaks(*stored) == [], [t[:200] for t in stored if new_leaks(t)]
    assert oracle_findings(*stored) == [] and named_findings(*stored) == []
    with open_db(db) as con:  # the texts are there, each secret a marker in its sentence
        texts = [r[0] for r in con.execute("SELECT text FROM messages WHERE text IS NOT NULL").fetchall()]
    assert any("my db password is" in t for t in texts) and any("sshpass -p" in t for t in texts)
    assert sum("[REDACTED:" in t for t in texts) >= len(NEW_SHAPES) // 2


@pytest.mark.slow
def test_the_rules_quote_no_new_shape_into_claude_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a key: the user stops a call and says what to run instead, pasting commands that carry the new shapes,
    in two sessions (the rules quote what the user said); `nightly` and `export --format claude-md` write none of
    them."""
    chosen = [p for p in NEW_SHAPES if "\n" not in p.text]
    split = [turn for m in SPLIT_MESSAGES for turn in (("user", m.first), ("user", m.second))]
    stopped_and_told(tmp_path, monkeypatch, [p.text for p in chosen], split)
    db = str(tmp_path / "p.duckdb")
    env = {"PLAYBOOK_OUT_DIR": str(tmp_path / "out")}
    claude_md = tmp_path / "CLAUDE.md"
    out = CliRunner().invoke(app, ["export", "--format", "claude-md", "--out", str(claude_md), "--db", db], env=env)
    assert out.exit_code == 0, out.output
    shown = CliRunner().invoke(app, ["show", "--db", db], env=env).stdout
    # (CLAUDE.md is not written when the screen holds every entry: the quotes talk of passwords and tokens)
    published = [claude_md.read_text()] if claude_md.exists() else []
    written = [*published, shown, *(p.read_text() for p in (tmp_path / "out").glob("*.*") if p.is_file())]
    assert len(shown) > 200
    assert new_leaks(*written) == []
    assert oracle_findings(*written) == [] and all_findings(*written) == []


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with s3_server(tmp_path_factory.mktemp("moto") / "moto.log") as endpoint:
        yield endpoint


@pytest.mark.slow
def test_push_uploads_no_new_shape_and_no_split_secret(
    tmp_path: Path, s3: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`push` redacts on the developer's machine: the objects on a real S3 server (moto) hold none of the new
    shapes, and a secret cut across two messages is redacted in both."""
    client = use_s3(s3, monkeypatch)
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))
    client.create_bucket(Bucket="leaks")
    folder = tmp_path / "projects"
    new_shapes_session(folder / "-work-acme" / "sec-2.jsonl")
    done = CliRunner().invoke(
        app,
        ["push", "s3://leaks/t", str(folder), "--contributor", "alice", "--json", "--db", str(tmp_path / "a.duckdb")],
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["secrets"] >= len(NEW_SHAPES) + len(SPLIT_MESSAGES)
    listed = client.list_objects_v2(Bucket="leaks").get("Contents", [])
    bodies = [client.get_object(Bucket="leaks", Key=o["Key"])["Body"].read().decode() for o in listed]
    assert len(bodies) == 1 and "[REDACTED:" in bodies[0]
    assert new_leaks(*bodies) == []
    texts = [s for body in bodies for line in body.splitlines() for s in _strings(json.loads(line))]
    assert oracle_findings(*texts) == [] and named_findings(*texts) == []


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_personal_pattern_re2_cannot_run_stops_the_command_in_one_line(tmp_path: Path) -> None:
    """`personal_patterns` run on RE2 (linear time); one it cannot compile (a lookbehind) is an error of one line
    naming it, before anything is read."""
    new_shapes_session(tmp_path / "t" / "s.jsonl")
    env = {"PLAYBOOK_PERSONAL_PATTERNS": "(?<=x)y", "PLAYBOOK_OUT_DIR": str(tmp_path / "out")}
    done = CliRunner().invoke(
        app, ["nightly", str(tmp_path / "t"), "--llm", "heuristic", "--db", str(tmp_path / "p.duckdb")], env=env
    )
    assert done.exit_code == 1, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert lines[-1].startswith("Error: personal_patterns entry `(?<=x)y` is not a pattern RE2 can run ("), lines
    assert "Traceback" not in done.output


def test_a_personal_pattern_re2_cannot_run_is_one_line_at_load_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lookbehind in `personal_patterns` stops the command before anything is read or stored; the nested
    quantifier the issue found (`(a+)+$`) runs, in linear time, on RE2."""
    from typer.testing import CliRunner

    from flows.cli import app

    db = tmp_path / "p.duckdb"
    monkeypatch.setenv("PLAYBOOK_PERSONAL_PATTERNS", "(?<=x)y")
    bad = CliRunner().invoke(app, ["ingest", str(SAMPLES), "--db", str(db)])
    assert bad.exit_code == 1 and not db.exists()
    assert bad.stderr.strip().splitlines() == [
        "Error: personal_patterns entry `(?<=x)y` is not a pattern RE2 can run (invalid perl operator: (?<=);"
        " rewrite it without lookarounds or back-references, or remove it."
    ]
    monkeypatch.setenv("PLAYBOOK_PERSONAL_PATTERNS", "(a+)+$")
    assert CliRunner().invoke(app, ["ingest", str(SAMPLES), "--db", str(db)]).exit_code == 0
