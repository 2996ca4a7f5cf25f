"""The records that cross between Python and Java are declared once (the dataclasses of
ais_pipeline/rules/records.py) and checked from both sides: the Java operators accept the row
types Python builds from them, a record survives the round trip through Java unchanged, and
``build_pipeline`` runs in this process on a test's own source of lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.files import read_lines, read_records, read_tallies, summarize, write_outputs
from ais_pipeline.rules.plain import run_plain
from ais_pipeline.rules.records import Report, VesselPane
from tests.support.jobs import assert_same_outputs

pytestmark = pytest.mark.flink


@pytest.fixture(scope="module")
def env():  # type: ignore[no-untyped-def]
    from ais_pipeline.pipeline.environment import local_environment
    from ais_pipeline.resources import helpers_jar

    environment = local_environment(PipelineConfig(web_ui_port=0, checkpoint_interval_s=0))
    environment.add_jars(helpers_jar().as_uri())
    return environment


def test_the_java_operators_accept_the_row_types_python_declares(env):  # type: ignore[no-untyped-def]
    from ais_pipeline.functions import rows
    from ais_pipeline.jvm.operators import AggregateJson
    from ais_pipeline.pipeline.topology import cell_windows, receiver_watermarks

    # Each Java operator resolves the fields it uses by name and checks their types when it is
    # built (RecordLayout.java): a mismatch raises here, naming the field.
    config = PipelineConfig()
    cell_windows(config).build()
    receiver_watermarks(config, None).build()
    AggregateJson("json", "json", rows.aggregate_type(), config.slide_ms).build()


def test_a_java_operator_names_the_field_whose_type_python_declares_otherwise(env):  # type: ignore[no-untyped-def]
    from pyflink.common import Types

    from ais_pipeline.functions import rows
    from ais_pipeline.jvm.operators import AggregateJson

    names = list(rows.aggregate_type().get_field_names())
    declared = zip(names, rows.aggregate_type().get_field_types(), strict=True)
    types = [Types.STRING() if n == "reports" else t for n, t in declared]
    wrong = Types.ROW_NAMED(names, types)
    with pytest.raises(Exception, match="reports"):
        AggregateJson("json", "json", wrong, 60_000).build()


def test_a_record_survives_the_round_trip_through_java_as_columns(env):  # type: ignore[no-untyped-def]
    from ais_pipeline.functions import rows
    from ais_pipeline.jvm.operators import ColumnsToRows

    panes = [
        VesselPane("u14zg4", 1_700_000_040_000, 244000001, 1, 10_200, 1, True, True, 0),
        VesselPane("gcpvj0", 1_700_000_100_000, 235000002, 1, 0, 0, False, True, 1_700_000_160_000),
    ]
    batch = env.from_collection([rows.to_columns(panes)], type_info=rows.columns(rows.vessel_pane_type()))
    back = ColumnsToRows("rows", "rows", rows.vessel_pane_type()).apply(batch)
    got = [
        rows.from_row(VesselPane, r)
        for r in back.map(lambda r: r, output_type=rows.vessel_pane_type()).execute_and_collect()
    ]
    assert got == panes

    report = Report(
        244000001,
        1_700_000_000_000,
        1,
        "13u?etPv2;0n:dDPwUM1U1Cb069D,0",
        "13u?etPv2;0n:dDPwUM1U1Cb069D",
        0,
        "r1",
        "raw",
        lat=None,
        heading=None,
    )
    stream = env.from_collection([rows.to_row(report)], type_info=rows.report_type())
    assert [
        rows.from_row(Report, r) for r in stream.map(lambda r: r, output_type=rows.report_type()).execute_and_collect()
    ] == [report]


def test_build_pipeline_runs_in_process_on_a_collection_of_lines_and_equals_the_plain_loop(env, tmp_path: Path):  # type: ignore[no-untyped-def]
    from pyflink.common import Types

    from ais_pipeline.pipeline.sinks import file_sinks
    from ais_pipeline.pipeline.topology import build_pipeline

    lines = list(read_lines(SAMPLE_INPUT))[:3000]
    config = PipelineConfig(web_ui_port=0)
    streams = build_pipeline(env, env.from_collection(lines, type_info=Types.STRING()), config)
    file_sinks(streams, tmp_path / "out", tmp_path / "tally", print_too=False)
    env.execute("in-process")
    summary = summarize(read_tallies(tmp_path / "tally"), len(lines), tmp_path / "out")
    assert summary["accounted_lines"] == 3000

    write_outputs(run_plain(config, lines), tmp_path / "oracle")
    assert_same_outputs(tmp_path / "out", tmp_path / "oracle")
    assert len(read_records(tmp_path / "out" / "positions")) == summary["positions_kept"] > 2000
