"""bench.threads: a process tree's CPU per thread, read from procfs."""

import os
import subprocess
import sys
import threading
import time

import pytest

from bench.threads import _threads, _tree, group_of, python_seconds, role_of

pytestmark = pytest.mark.unit


def test_a_thread_that_burns_cpu_is_found_with_its_cpu():
    # The thread burns until it has used 0.3 s of CPU by its own clock, however busy the machine
    # is (a fixed wall-clock wait gave it less than that with both cores taken), then waits alive
    # while procfs is read.
    burned_enough, done = threading.Event(), threading.Event()
    native: list[int] = []

    def burn() -> None:
        native.append(threading.get_native_id())
        while time.thread_time() < 0.3:
            sum(range(10_000))
        burned_enough.set()
        done.wait(60)

    worker = threading.Thread(target=burn, name="burner")
    worker.start()
    try:
        assert burned_enough.wait(120)
        threads = _threads(os.getpid())
    finally:
        done.set()
        worker.join()
    (burned,) = [cpu for (_, tid), (_, _, cpu) in threads.items() if tid == native[0]]
    assert burned >= 0.25  # procfs counts in clock ticks (10 ms)


def test_the_tree_holds_the_children_of_the_root():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert child.pid in _tree(os.getpid())
    finally:
        child.kill()
        child.wait()


def test_jvm_threads_are_grouped_by_their_work_and_task_threads_by_their_chain():
    assert group_of("java", "C2 CompilerThre") == "JIT: C2 compiler"
    assert group_of("java", "GC Thread#0") == "garbage collector"
    assert group_of("java", "G1 Refine#0") == "garbage collector"
    assert group_of("java", "cell windows (k") == "cell windows (k"
    assert group_of("python", "python") == "python (the CLI and its helpers)"


def test_a_jvm_is_named_by_its_main_class_and_a_script_by_its_program():
    taskmanager = ["/usr/bin/java", "-Xmx536870902", "-Dlog.file=/tmp/x.log", "-classpath", "/lib/a.jar"]
    taskmanager += ["org.apache.flink.runtime.taskexecutor.TaskManagerRunner", "--configDir", "/conf"]
    assert role_of(taskmanager) == "TaskManagerRunner"
    assert role_of(["java", "-D", "org.apache.flink.x=1", "org.apache.flink.runtime.util.bash.BashJavaUtils"]) == (
        "BashJavaUtils"
    )
    assert role_of(["/bin/bash", "/flink/bin/taskmanager.sh", "start-foreground"]) == "bash"
    assert role_of([]) == "?"


def test_the_python_side_counts_the_samples_with_python_on_the_stack():
    raw = (
        "process 17 (java);process_element (operators.py:260);decide (dedup.py:300) 120\n"
        "process 17 (java);on_timer (operators.py:320) 30\n"
        " 400\n"
    )
    assert python_seconds(raw, rate=50) == 3.0


def test_a_python_sample_counts_for_the_innermost_rule_on_its_stack() -> None:
    from bench.threads import DEDUP, PYFLINK, rule_of, rule_seconds

    op = "DedupVessel.process_element (ais_pipeline/functions/operators.py:294)"
    process = "VesselLogic.process (ais_pipeline/rules/dedup.py:271)"
    assert rule_of([op, process, "VesselLogic._decide (ais_pipeline/rules/dedup.py:505)"]) == DEDUP
    assert rule_of([op, process, "decode (ais_pipeline/rules/decode.py:80)", "f (pyais/messages.py:1)"]) == (
        "decoding (pyais)"
    )
    step = "VesselLogic._step (ais_pipeline/rules/dedup.py:320)"
    assert rule_of([op, step, "spread (ais_pipeline/rules/spread.py:101)"]).startswith("spread")
    assert rule_of([op, step, "VesselTracks.advance (ais_pipeline/rules/tracks.py:278)"]) == "tracks"
    # The json module counts for its caller: a vessel's value written to keyed state.
    to_text = "_VesselEntry.to_text (ais_pipeline/functions/state.py:160)"
    assert rule_of([op, to_text, "dumps (json/__init__.py:238)", "JSONEncoder.encode (json/encoder.py:200)"]) == (
        "vessel state (cache, write-behind, timers)"
    )
    assert rule_of([op, "wire_reports (ais_pipeline/functions/rows.py:180)"]) == PYFLINK
    raw = f"{op};{process} 50\n{op};{step} 25\n\n"
    assert rule_seconds(raw, rate=50) == {DEDUP: 1.0, "tracks": 0.5}
