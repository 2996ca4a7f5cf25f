# Two commands on a fresh machine:
#   make run    the job on the bundled real sample, in a local Flink mini-cluster -> out/sample/
#   make test   every test (lint and types too); it sets itself up
# Each target installs what it needs: .venv (the package, editable, with Python packages from PyPI;
# its build runs Maven on java/ into udfs/ais_pipeline/jars/), and the jar cache
# (~/.cache/ais-pipeline/jars, or AIS_PIPELINE_CACHE: the Kafka and JDBC connectors, the PostgreSQL
# driver and a Kafka broker's jars from Maven Central, as connectors/pom.xml pins them), and the
# JVM's class archive there (a run of 1,000 sample lines; later runs start faster with it).
#
# Kafka and a standalone cluster (see docs/kafka-and-clusters.md):
#   make kafka-start | kafka-stop        one KRaft broker on 127.0.0.1:9092 (scripts/kafka.sh)
#   make cluster-start | cluster-stop    a standalone Flink cluster, web UI on :8081 (scripts/cluster.sh)
#   make replay                          the bundled sample into the topic ais-raw
#   make submit-kafka                    the job on the cluster, from ais-raw to the ais.* topics
#   make postgres-start | postgres-stop  a PostgreSQL server of the project's own on 127.0.0.1:55432
#   make mosquitto-start | mosquitto-stop  an MQTT broker (Debian's mosquitto) on 127.0.0.1:1883
#   make moto-start | moto-stop          moto's server: Kinesis and DynamoDB on 127.0.0.1:5000 (docs/kinesis.md)

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MVN := mvn -q -B -Dstyle.color=never
JAR := udfs/ais_pipeline/jars/ais-flink-helpers.jar

.PHONY: setup run test test-slow test-java test-unit test-flink test-integration lint plain clean browser bench \
	kafka-start kafka-stop cluster-start cluster-stop replay submit-kafka postgres-start postgres-stop \
	mosquitto-start mosquitto-stop moto-start moto-stop bench-jvm

setup: $(STAMP) $(JAR)
	$(PY) -m ais_pipeline.resources fetch kafka-connector jdbc kafka-broker
	$(PY) -m ais_pipeline.pipeline.jvm_archive

$(STAMP): pyproject.toml java/maven_backend.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dev]"
	touch $(STAMP)

$(JAR): $(shell find java/src/main -type f) java/pom.xml
	$(MVN) -f java/pom.xml -DskipTests package

run: setup
	$(VENV)/bin/ais-pipeline run --output out/sample $(ARGS)

plain: setup
	$(PY) -m ais_pipeline.tools.plain --output out/sample-plain $(ARGS)

lint: setup
	$(VENV)/bin/ruff check udfs jobs tests bench java/maven_backend.py
	$(VENV)/bin/ruff format --check udfs jobs tests bench java/maven_backend.py
	$(VENV)/bin/mypy

# The benchmark: decode-only ceiling, plain loop, job at parallelism 1 and 2, on seeded feeds of
# 100,000 and 400,000 lines, and a NOAA day of 1,000,000 rows (.csv.zst) beside a pandas loop,
# twice each in turns; a feed of 20,000 vessels with the job of commit 6c84c88 beside this one's
# (bench/baseline.py); one run at parallelism 1 on each feed with its CPU per line by thread group,
# the Python and Java sides and by rule (bench/threads.py, py-spy); writes the tables into docs/performance.md
# (bench/files.py); then the live feeds: the relay TCP->Kafka, the job's UDP
# input at 10,000 lines/s, its memory over 16 minutes, into docs/live-feeds.md (bench/live.py);
# a live fleet over UDP at 1,000 and 10,000 lines/s with a silence, the time from a line to its row
# in PostgreSQL, Kafka (at least and exactly once) and files, into docs/live-feeds.md (bench/latency.py);
# then scaling: the Kafka job on the standalone cluster (two one-slot TaskManagers) at parallelism
# 1 and 2 (bench/scale.py); then the world's fleet: generated world feeds of 10k, 100k and 1M vessels on
# each state backend (bench/world.py), and a restore of a million vessels on the standalone cluster
# (bench/world_restore.py).
bench: test-slow
	bash scripts/scratch.sh $(PY) -m bench.files --write-docs $(ARGS)
	bash scripts/scratch.sh $(PY) -m bench.live --write-docs
	$(PY) -m bench.latency --write-docs
	bash scripts/scratch.sh $(PY) -m bench.scale --write-docs
	$(PY) -m bench.world --write-docs
	$(PY) -m bench.world_restore --write-docs

# JVM options against the job's cost and start-up, taken in turns (bench/jvm_options.py): the
# class data sharing archive, C1 only, the serial collector.
bench-jvm: setup
	$(PY) -m bench.jvm_options $(ARGS)

# The Java operators on Flink's test harnesses, against the golden cases in tests/golden/.
test-java: setup
	$(MVN) -f java/pom.xml test

test-unit: setup
	$(PY) -m pytest -m unit

test-flink: setup
	$(PY) -m pytest -m flink

test-integration: setup browser
	$(PY) -m pytest -m integration

postgres-start:
	bash scripts/postgres.sh start

postgres-stop:
	bash scripts/postgres.sh stop

kafka-start: setup
	bash scripts/kafka.sh start

mosquitto-start:
	bash scripts/mosquitto.sh start

mosquitto-stop:
	bash scripts/mosquitto.sh stop

moto-start: setup
	bash scripts/moto.sh start

moto-stop:
	bash scripts/moto.sh stop

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
	  echo "make browser: installing Debian's chromium with apt-get (for the web UI test); apt may also upgrade packages that chromium depends on"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

test: lint browser test-java
	bash scripts/scratch.sh $(PY) -m pytest -m "not slow"

# The slow variants of paths make test covers (marked slow: another parallelism or state backend,
# a second failure of a kind), left to make bench.
test-slow: setup browser
	bash scripts/scratch.sh $(PY) -m pytest -m slow

clean:
	rm -rf $(VENV) build out .pytest_cache .mypy_cache .ruff_cache udfs/ais_pipeline/jars udfs/ais_pipeline/bundled-files
