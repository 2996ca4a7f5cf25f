# Two commands on a fresh machine:
#   make run    the job on the bundled real sample, in a local Flink mini-cluster -> out/sample/
#   make test   every test (lint and types too); it sets itself up
# Each target installs what it needs into .venv (Python packages from PyPI, the job's Java helper
# compiled with the JDK against the PyFlink package's jars).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JAR := build/ais-flink-helpers.jar

.PHONY: setup run test test-unit test-flink lint plain clean

setup: $(STAMP) $(JAR)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dev]"
	touch $(STAMP)

$(JAR): $(STAMP) $(shell find java/src -name '*.java') scripts/build-java.sh
	PYTHON=$(PY) bash scripts/build-java.sh

run: setup
	$(VENV)/bin/ais-pipeline run --output out/sample $(ARGS)

plain: setup
	$(PY) -m udfs.plain --output out/sample-plain $(ARGS)

lint: setup
	$(VENV)/bin/ruff check jobs udfs tests
	$(VENV)/bin/ruff format --check jobs udfs tests
	$(VENV)/bin/mypy

test-unit: setup
	$(PY) -m pytest -m unit

test-flink: setup
	$(PY) -m pytest -m flink

test: lint
	$(PY) -m pytest

clean:
	rm -rf $(VENV) build out .pytest_cache .mypy_cache .ruff_cache
