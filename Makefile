# Two commands for a fresh machine: `make run` (app + demo data) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
STAMP := $(VENV)/.installed
ASSETS := frontend/static/dist/.built

.PHONY: install assets run test migrate demo worker clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[test]"
	@touch $(STAMP)

assets: $(ASSETS)

$(ASSETS): frontend/package.json frontend/package-lock.json $(shell find frontend/src -type f 2>/dev/null)
	@if command -v npm >/dev/null 2>&1; then \
		cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build && touch static/dist/.built; \
	else \
		echo "npm not found: install Node.js 18+ to build the browser assets" >&2; exit 1; \
	fi

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo

run: install assets
	DEBUG=$${DEBUG:-1} $(PY) manage.py migrate --noinput
	DEBUG=$${DEBUG:-1} $(PY) manage.py load_demo
	DEBUG=$${DEBUG:-1} $(PY) manage.py runserver 127.0.0.1:$(PORT)

test: install assets
	$(VENV)/bin/pytest $(PYTEST_ARGS)

worker: install
	$(VENV)/bin/celery -A config worker --loglevel=info

clean:
	rm -rf $(VENV) var frontend/node_modules frontend/static/dist
