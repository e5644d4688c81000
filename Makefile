# Two commands for a newcomer: `make demo` and `make test`. Both set up .venv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench example clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0 -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mltd diagnose examples/diverging-run --plot diverging-run.png

test: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check analysis bot handlers tests bench
	$(BIN)/mypy analysis bot
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/ingest.py

# Regenerate the bundled example from its real training run (tests/scenarios).
example: $(STAMP)
	$(BIN)/python -m tests.scenarios lr_jump_mlp examples/diverging-run

clean:
	rm -rf $(VENV) tests/.scenario-cache
