"""MQTT through a real broker (Debian's mosquitto, scripts/mosquitto.sh), at QoS 1: the bundled
sample published one AIS message a message (a multipart group's sentences together), into the
job's own ``--input mqtt://`` and through ``ais-pipeline relay`` into a real KRaft broker. The
relay killed mid-stream and started again resumes its persistent session: the broker sends again
what it had not seen acknowledged, so Kafka holds every line, some twice (exact duplicates that
dedup removes), and the job's outputs equal the file run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from ais_pipeline.config import SAMPLE_INPUT
from tests.support.jobs import ROOT, SAMPLE_SUMMARY, assert_same_outputs, run_oracle
from tests.support.kafka import read_topic, write_outputs
from tests.support.live import LiveJob
from tests.support.servers import MqttBroker

pytestmark = pytest.mark.integration
LIVE = "mqtt://127.0.0.1:1883/ais/#"  # any live input: the plain loop as a live run runs

SAMPLE = SAMPLE_INPUT.read_text().splitlines()


def messages(lines: list[str]) -> list[str]:
    """One payload per AIS message: a multipart group's lines (``g:1-2-id`` ... ``g:2-2-id``) together."""
    out: list[str] = []
    group: list[str] = []
    for line in lines:
        group.append(line)
        tag = line[1 : line.index("\\", 1)] if line.startswith("\\") else ""
        part = next((item[2:] for item in tag.split(",") if item.startswith("g:")), "")
        if not part or part.split("-")[0] == part.split("-")[1]:
            out.append("\n".join(group))
            group = []
    if group:
        out.append("\n".join(group))
    return out


def publish(broker: MqttBroker, topic: str, payloads: list[str], rate: int = 5_000) -> None:
    """The payloads at QoS 1, ``rate`` a second, each one acknowledged by the broker."""
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"test-publisher-{time.monotonic_ns()}")
    client.max_inflight_messages_set(100)
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        sent = []
        step = max(rate // 10, 1)
        for start in range(0, len(payloads), step):
            sent += [client.publish(topic, p, qos=1) for p in payloads[start : start + step]]
            time.sleep(0.1)
        for info in sent:
            info.wait_for_publish(timeout=60)
    finally:
        client.disconnect()
        client.loop_stop()


def wait_for_a_subscriber(broker: MqttBroker, client_prefix: str, timeout_s: float = 120) -> None:
    """mosquitto logs each client it admits: wait for one whose id starts so (each test gives its
    clients ids of their own: the log holds the earlier tests' clients too)."""
    log = Path(broker.env["MQTT_DIR"]) / "mosquitto.log"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if log.exists() and f" as {client_prefix}" in log.read_text(errors="replace"):
            time.sleep(1)  # its subscription follows the connection
            return
        time.sleep(0.5)
    raise AssertionError(f"no client {client_prefix}* connected to the broker in {timeout_s} s")


def test_the_sample_over_mqtt_into_the_jobs_own_input_gives_the_file_runs_outputs(
    mqtt_broker: MqttBroker, tmp_path: Path
):
    job = LiveJob(tmp_path, f"mqtt://127.0.0.1:{mqtt_broker.port}/ais/direct/#", env={"FEED_CLIENT_ID": "job-direct"})
    try:
        wait_for_a_subscriber(mqtt_broker, "job-direct")
        publish(mqtt_broker, "ais/direct/station-117", messages(SAMPLE))
        job.wait_for("lines", len(SAMPLE))
        time.sleep(2)
        summary = job.stop()
    finally:
        job.kill()
    assert summary["stopped"] == "drained"
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    oracle = tmp_path / "oracle"
    run_oracle(SAMPLE_INPUT, oracle, input_feed=LIVE)  # a live run's watermark moves in steps of a second
    assert_same_outputs(job.out, oracle)


def test_a_broker_that_drops_the_session_is_connected_to_again_and_nothing_it_delivers_is_lost(
    mqtt_broker: MqttBroker, tmp_path: Path
):
    """mosquitto restarted between two halves of the sample (it keeps no session on disk): the
    job's input connects again, subscribes again, and the outputs are the file run's."""
    payloads = messages(SAMPLE)
    half = len(payloads) // 2
    job = LiveJob(tmp_path, f"mqtt://127.0.0.1:{mqtt_broker.port}/ais/restart/#", env={"FEED_CLIENT_ID": "job-restart"})
    log = Path(mqtt_broker.env["MQTT_DIR"]) / "mosquitto.log"
    try:
        wait_for_a_subscriber(mqtt_broker, "job-restart")
        publish(mqtt_broker, "ais/restart/station-117", payloads[:half])
        job.wait_for("lines", sum(p.count("\n") + 1 for p in payloads[:half]))
        log.write_text("")  # the restarted broker's log alone
        mqtt_broker.run("stop")
        time.sleep(2)
        mqtt_broker.run("start")
        wait_for_a_subscriber(mqtt_broker, "job-restart")
        publish(mqtt_broker, "ais/restart/station-117", payloads[half:])
        job.wait_for("lines", len(SAMPLE))
        job.wait_for("feed_disconnects", 1, timeout_s=30)
        assert job.metric("feed_connections") == 2
        time.sleep(2)
        summary = job.stop()
    finally:
        job.kill()
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    oracle = tmp_path / "oracle"
    run_oracle(SAMPLE_INPUT, oracle, input_feed=LIVE)  # a live run's watermark moves in steps of a second
    assert_same_outputs(job.out, oracle)


def relay(kafka: str, broker: MqttBroker, topic: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "ais_pipeline.cli", "relay", "--from", f"mqtt://127.0.0.1:{broker.port}/ais/relay/#"]
    return subprocess.Popen(
        [*cmd, "--topic", topic, "--bootstrap-servers", kafka],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, FEED_CLIENT_ID="relay-under-test"),
    )


def test_a_relay_killed_mid_stream_resumes_its_session_and_kafka_holds_every_line(
    kafka: str, mqtt_broker: MqttBroker, tmp_path: Path
):
    payloads = messages(SAMPLE)
    first = relay(kafka, mqtt_broker, "mqtt-relay")
    wait_for_a_subscriber(mqtt_broker, "relay-under-test")
    publisher = threading.Thread(target=publish, args=(mqtt_broker, "ais/relay/station-117", payloads, 2_000))
    publisher.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(read_topic(kafka, "mqtt-relay", timeout_s=10)) < 2_000:
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)  # mid-stream, without a word: lines in flight are not acknowledged
    first.communicate(timeout=30)
    second = relay(kafka, mqtt_broker, "mqtt-relay")  # the same client id: the same session
    publisher.join(timeout=120)
    deadline = time.monotonic() + 120
    values: list[str] = []
    while time.monotonic() < deadline:
        values = [v for _, v in read_topic(kafka, "mqtt-relay", timeout_s=10)]
        if set(values) >= set(SAMPLE):
            break
        time.sleep(1)
    second.send_signal(signal.SIGTERM)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err[-3000:]
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["undelivered"] == 0 and summary["failed"] == 0
    counts = Counter(values)
    assert set(counts) == set(SAMPLE)  # every line, and nothing else: byte for byte (they have tag blocks)
    twice = sum(n - 1 for n in counts.values())
    # The lines Kafka holds twice are the broker's redeliveries: whole messages, in their order.
    print(f"lines redelivered after the kill: {twice}")

    # The job reads the topic to its end: the redeliveries are duplicates that dedup removes.
    out_dir = tmp_path / "summary"
    job = subprocess.run(
        [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--source", "kafka", "--web-ui-port", "0",
         "--bootstrap-servers", kafka, "--topic", "mqtt-relay", "--bounded", "--starting-offsets", "earliest",
         "--output-topic-prefix", "mqtt.", "--output", str(out_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert job.returncode == 0, job.stderr[-3000:]
    got = tmp_path / "got"
    write_outputs(kafka, "mqtt.", got)
    oracle = tmp_path / "oracle"
    run_oracle(SAMPLE_INPUT, oracle)
    assert_same_outputs(got, oracle)
    job_summary = json.loads((out_dir / "summary.json").read_text())
    assert job_summary["lines"] == len(values)
    assert job_summary["duplicates_exact"] + job_summary["static_duplicates"] >= SAMPLE_SUMMARY["duplicates_exact"]
