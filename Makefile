# The two README commands: `make run` (embedded, no servers needed) and `make test` (PostgreSQL + Redis).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install translations run test test-case test-orch lint fuzz bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# The translation catalogues (.po -> .mo) in pure Python (shared/web/messages.py): no GNU gettext
# needed. Only stale ones are rewritten, so this costs nothing when nothing changed.
install: $(STAMP)
	$(PY) -m shared.web.messages

# Developers: pull new console and admin strings into the .po files (needs GNU gettext's xgettext),
# translate them, then `make install` compiles them.
translations: install
	DJANGO_SETTINGS_MODULE=casemgmt.config.settings.local $(PY) manage_case.py makemessages -l de --no-location --no-obsolete \
	  -i '.venv/*' -i 'tests/*' -i 'var/*' -i 'bench/*' -i 'docs/*' -i 'deploy/*'

run: install
	$(PY) deploy/devserver.py

# Lint first: style and types are part of the test (CI runs `make test`).
test: install lint
	bash deploy/ensure-services.sh
	$(PY) tests/run.py

test-case: install
	bash deploy/ensure-services.sh
	$(PY) tests/run.py case

test-orch: install
	bash deploy/ensure-services.sh
	$(PY) tests/run.py orch

# The longer schemathesis run of both OpenAPI documents (the suite runs a bounded one); see
# docs/reliability.md. OPENAPI_FUZZ_EXAMPLES / _SEED / _PHASES override the defaults below.
fuzz: install
	bash deploy/ensure-services.sh
	OPENAPI_FUZZ_EXAMPLES=$${OPENAPI_FUZZ_EXAMPLES:-50} OPENAPI_FUZZ_PHASES=$${OPENAPI_FUZZ_PHASES:-examples,coverage,fuzzing,stateful} \
	  $(PY) -m pytest tests/casemgmt/test_openapi_fuzz.py --ds=casemgmt.config.settings.test -q
	OPENAPI_FUZZ_EXAMPLES=$${OPENAPI_FUZZ_EXAMPLES:-50} OPENAPI_FUZZ_PHASES=$${OPENAPI_FUZZ_PHASES:-examples,coverage,fuzzing,stateful} \
	  $(PY) -m pytest tests/orchestrator/system/test_openapi_fuzz.py --ds=orchestrator.config.settings.test -q

# lint-imports checks the layer contracts in pyproject.toml ([tool.importlinter]).
# mypy runs once per Django project: the django-stubs plugin loads one settings module, and each
# service's models and settings are only known under its own (shared/ is checked under both).
lint: install
	$(VENV)/bin/ruff check casemgmt orchestrator shared tests bench deploy
	$(VENV)/bin/ruff format --check casemgmt orchestrator shared tests bench deploy
	$(VENV)/bin/lint-imports --no-cache
	DJANGO_SETTINGS_MODULE=casemgmt.config.settings.test $(VENV)/bin/mypy --cache-dir .mypy_cache/case casemgmt shared
	DJANGO_SETTINGS_MODULE=orchestrator.config.settings.test $(VENV)/bin/mypy --cache-dir .mypy_cache/orch orchestrator shared

clean:
	rm -rf var/ .pytest_cache
