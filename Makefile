# Two commands do everything on a fresh Debian machine with Python 3.11:
#   make demo   set up, load demo data and run the app on http://127.0.0.1:8000
#   make test   run the whole test suite (PostgreSQL when reachable, else SQLite)
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-fast test-sqlite screenshots install nltk lint format migrations-check clean

$(VENV)/.installed: requirements.txt requirements-dev.txt scripts/system_packages.sh
	PYTHON=$(PYTHON) scripts/system_packages.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

nltk: install
	$(PY) -m scripts.nltk_data

demo: install nltk
	scripts/demo.sh

# The browser tests drive Debian's Chromium; it is installed here (as root) when missing.
test: install nltk
	WITH_BROWSER=1 PYTHON=$(PYTHON) scripts/system_packages.sh
	DATABASE_URL="$$(scripts/test_database.sh)" $(PY) -m pytest $(PYTEST_ARGS)

# The quick loop: everything but the browser, race and real-worker tests (pytest markers).
test-fast: install nltk
	DATABASE_URL="$$(scripts/test_database.sh)" $(PY) -m pytest -m "not browser and not race and not real_worker" $(PYTEST_ARGS)

test-sqlite: install nltk
	WITH_BROWSER=1 PYTHON=$(PYTHON) scripts/system_packages.sh
	DATABASE_URL="sqlite:///$(CURDIR)/var/test.sqlite3" $(PY) -m pytest $(PYTEST_ARGS)

# Refresh docs/screenshots/ from the browser tests.
screenshots: install nltk
	UPDATE_SCREENSHOTS=1 DATABASE_URL="$$(scripts/test_database.sh)" $(PY) -m pytest tests/e2e -q

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

migrations-check: install
	$(PY) manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) var
