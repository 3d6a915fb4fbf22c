# playbook: `make demo` runs the main job on the bundled transcripts; `make test` runs the checks.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTHON ?= python3
DEMO_DB ?= data/playbook.duckdb

.PHONY: help venv test lint typecheck pytest demo bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP) ## Create .venv and install the project with its dev tools

lint: venv ## ruff (lint and format check)
	$(VENV)/bin/ruff check core flows tests bench
	$(VENV)/bin/ruff format --check -q core flows tests bench

typecheck: venv ## mypy over core and flows
	$(VENV)/bin/mypy

pytest: venv ## the test suite
	$(VENV)/bin/pytest

test: lint typecheck pytest ## lint, type-check and run the tests

demo: venv ## Ingest the bundled sample transcripts, run the nightly job (no key: heuristic), export
	$(VENV)/bin/playbook nightly data/samples --llm auto --db $(DEMO_DB)
	@echo
	$(VENV)/bin/playbook history --db $(DEMO_DB)
	@echo
	@echo "Exported playbook: data/out/default.md and data/out/default.json"
	@echo "Evolution report:  data/out/report/default/index.html (open it in a browser)"
	@head -n 20 data/out/default.md

bench: venv ## Run the benchmarks (ratios measured in one run)
	$(PY) bench/bench_apply.py
	$(PY) bench/bench_tokens.py
	$(PY) bench/bench_ingest.py
	$(PY) bench/bench_pipeline.py
	$(PY) bench/bench_report.py

clean: ## Remove the virtual environment and generated data
	rm -rf $(VENV) data/*.duckdb data/*.duckdb.lock data/out
