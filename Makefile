# The two README commands: `make run` (embedded, no servers needed) and `make test` (PostgreSQL + Redis).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run test test-case test-orch lint bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) deploy/devserver.py

test: install
	bash deploy/ensure-services.sh
	$(PY) tests/run.py

test-case: install
	bash deploy/ensure-services.sh
	$(PY) tests/run.py case

test-orch: install
	bash deploy/ensure-services.sh
	$(PY) tests/run.py orch

lint: install
	$(VENV)/bin/ruff check casemgmt orchestrator shared tests bench deploy
	$(VENV)/bin/ruff format --check casemgmt orchestrator shared tests bench deploy

clean:
	rm -rf var/ .pytest_cache
