# Two commands for a fresh machine: `make run` (app + demo data) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
STAMP := $(VENV)/.installed
ASSETS := frontend/static/dist/.built
ENV_FILE := .env
# Type-checked: the pure modules and the services (mypy, with the Django plugin).
TYPED := core verifybench/services.py annotation/setup.py verifybench/importing verifybench/label_rules.py annotation/workflow.py annotation/label_model.py \
	annotation/services grading/cascade.py grading/judges grading/services.py grading/runs grading/verdict_writes.py \
	grading/proofs/services.py grading/proofs/scoring.py grading/proofs/leaderboard.py grading/selection \
	reports/services.py reports/exports client/mathlabel_client webhooks/services.py webhooks/signing.py webhooks/egress.py webhooks/selectors.py annotation/completion.py

.PHONY: install bench-install assets lint typecheck run test migrate demo worker scheduler clean

install: $(STAMP) $(ENV_FILE)

$(STAMP): pyproject.toml client/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[test]" -e "./client[pandas,pyarrow,datasets]"
	@touch $(STAMP)

# Local development settings (DEBUG and a generated SECRET_KEY), read by config/settings.py; git-ignored.
$(ENV_FILE):
	@$(PYTHON) -c 'import secrets; print("# Local development settings, written by make install; never used in production.\nDEBUG=1\nSECRET_KEY=" + secrets.token_urlsafe(50))' > $(ENV_FILE)
	@echo "wrote $(ENV_FILE) (DEBUG=1 and a generated SECRET_KEY for this machine)"

# The peer verifier the benchmarks under bench/ compare with.
bench-install: install
	$(PY) -m pip install --quiet ".[bench]"

assets: $(ASSETS)

$(ASSETS): frontend/package.json frontend/package-lock.json $(shell find frontend/src -type f 2>/dev/null)
	@if command -v npm >/dev/null 2>&1; then \
		cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build && touch static/dist/.built; \
	else \
		echo "npm not found: install Node.js 18+ to build the browser assets" >&2; exit 1; \
	fi

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy $(TYPED)

typecheck: install
	$(VENV)/bin/mypy $(TYPED)

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo

# The web server and, beside it, a worker that runs every background job and the scheduler of periodic tasks (the job
# sweep among them); Ctrl-C stops all three.
run: install assets
	$(PY) manage.py create_database
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py serve 127.0.0.1:$(PORT)

test: install assets lint
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# One more worker, on this machine or another. Periodic tasks come from the one scheduler (`make scheduler`, or the
# one `make run` starts): run exactly one per deployment.
worker: install
	$(VENV)/bin/celery -A config worker --loglevel=info

scheduler: install
	$(VENV)/bin/celery -A config beat --loglevel=info --schedule var/celerybeat-schedule

clean:
	rm -rf $(VENV) var frontend/node_modules frontend/static/dist
