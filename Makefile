# Two commands on a fresh machine:
#   make run    the job on the bundled real sample, in a local Flink mini-cluster -> out/sample/
#   make test   every test (lint and types too); it sets itself up
# Each target installs what it needs into .venv (Python packages from PyPI, the job's Java helpers
# compiled with the JDK against the PyFlink package's jars) and build/ (the Kafka connector and a
# Kafka broker's jars from Maven Central, as connectors/pom.xml pins them).
#
# Kafka and a standalone cluster (see README "Kafka and a Flink cluster"):
#   make kafka-start | kafka-stop        one KRaft broker on 127.0.0.1:9092 (scripts/kafka.sh)
#   make cluster-start | cluster-stop    a standalone Flink cluster, web UI on :8081 (scripts/cluster.sh)
#   make replay                          the bundled sample into the topic ais-raw
#   make submit-kafka                    the job on the cluster, from ais-raw to the ais.* topics

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JAR := build/ais-flink-helpers.jar
KAFKA_JAR := build/ais-kafka-helpers.jar
BROKER_JARS := build/jars/kafka/.complete

.PHONY: setup run test test-unit test-flink test-integration lint plain clean browser bench \
	kafka-start kafka-stop cluster-start cluster-stop replay submit-kafka

setup: $(STAMP) $(JAR) $(KAFKA_JAR) $(BROKER_JARS)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dev]"
	touch $(STAMP)

$(JAR): $(STAMP) $(shell find java/src -name '*.java') scripts/build-java.sh
	PYTHON=$(PY) bash scripts/build-java.sh

$(KAFKA_JAR): $(STAMP) $(shell find java/kafka/src -name '*.java') scripts/build-java.sh connectors/pom.xml
	rm -f build/jars/flink/.complete
	PYTHON=$(PY) bash scripts/build-java.sh kafka

$(BROKER_JARS): connectors/pom.xml
	rm -f $(BROKER_JARS)
	bash scripts/fetch-jars.sh broker

run: setup
	$(VENV)/bin/ais-pipeline run --output out/sample $(ARGS)

plain: setup
	$(PY) -m udfs.plain --output out/sample-plain $(ARGS)

lint: setup
	$(VENV)/bin/ruff check jobs udfs tests
	$(VENV)/bin/ruff format --check jobs udfs tests
	$(VENV)/bin/mypy

# The benchmark: decode-only ceiling, plain loop, job at parallelism 1 and 2, on seeded feeds of
# 50,000 and 200,000 lines, twice each; writes the table into README.md (scripts/bench.py).
bench: setup
	$(PY) scripts/bench.py --readme $(ARGS)

test-unit: setup
	$(PY) -m pytest -m unit

test-flink: setup
	$(PY) -m pytest -m flink

test-integration: setup browser
	$(PY) -m pytest -m integration

kafka-start: setup
	bash scripts/kafka.sh start

kafka-stop:
	bash scripts/kafka.sh stop

cluster-start: setup
	bash scripts/cluster.sh start

cluster-stop:
	bash scripts/cluster.sh stop

replay: setup
	$(VENV)/bin/ais-pipeline replay data/sample/aislistener__nmea-with-tagblock.txt --topic ais-raw

submit-kafka: setup
	bash scripts/cluster.sh submit --source kafka --topic ais-raw $(ARGS)

# Headless Chromium for the web UI test (tests/integration/test_web_ui.py): Debian's package.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

test: lint browser
	$(PY) -m pytest

clean:
	rm -rf $(VENV) build out .pytest_cache .mypy_cache .ruff_cache
