"""Kinesis and DynamoDB for the job: the checks that turn a missing stream, a missing table, a table
of another key, or AWS that does not answer into a one-line error before anything is submitted.
The source and the sink are in :mod:`ais_pipeline.pipeline.sources` and
:mod:`~ais_pipeline.pipeline.sinks`; the classes behind them in :mod:`ais_pipeline.jvm.aws`.

Credentials come from the AWS SDK's default chain (``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE`` and the shared files, web identity, a container or
instance role): never from a flag, never in a log or an output.
"""

from __future__ import annotations

import logging

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.config import PipelineConfig
from ais_pipeline.errors import ConfigError
from ais_pipeline.jvm import aws
from ais_pipeline.jvm.gateway import JavaError
from ais_pipeline.resources import helpers_jar

log = logging.getLogger("ais_pipeline.aws")


class AwsSetupError(ConfigError):
    """The stream or the table cannot be used: said in one line, before the job runs."""


def use_helpers(env: StreamExecutionEnvironment) -> None:
    """The job's jar (with the AWS SDK) on the client's classpath for the checks, and the job's."""
    env.add_jars(helpers_jar().as_uri())


def check_stream(config: PipelineConfig) -> None:
    """The stream exists and answers."""
    try:
        shards = aws.check_stream(config.region, config.kinesis_endpoint, config.stream)
    except JavaError as exc:
        raise AwsSetupError(f"--stream (KINESIS_STREAM): {exc}") from None
    log.info("Kinesis stream %s in %s: %d open shards", config.stream, config.region, shards)


def prepare_table(config: PipelineConfig) -> None:
    """The aggregates' table is there with the job's key, or is made (``--dynamodb-create``)."""
    try:
        done = aws.prepare_table(config.region, config.dynamodb_endpoint, config.dynamodb_table, config.dynamodb_create)
    except JavaError as exc:
        raise AwsSetupError(f"--dynamodb-table (DYNAMODB_TABLE): {exc}") from None
    log.info("aggregates also into DynamoDB table %s (%s)", config.dynamodb_table, done)
