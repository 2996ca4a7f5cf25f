"""Global Fishing Watch's loitering rule as its own code computes it, for the tests: the
functions of ``pipe-loitering`` (GlobalFishingWatch/pipe-loitering, Apache-2.0, commit
6d2c5e8, ``create_raw_loitering/transforms/``) transcribed without Beam: the hourly buckets of
``calculate_hourly_stats.py``, the slow groups of ``group_loitering_ranges.py`` (one window
holding the whole track, so no day to split) and the event of ``calculate_loitering_stats.py``.
Messages are dicts with ``timestamp`` (a datetime), ``hours``, ``meters_to_prev``, ``lat``,
``lon``, ``distance_from_shore_m``, ``ssvid`` and ``seg_id``."""

from __future__ import annotations

from itertools import groupby
from typing import Any

Msg = dict[str, Any]


def calculate_total_hours(msgs: list[Msg]) -> float | None:
    hours = [msg["hours"] for msg in msgs if msg["hours"]]
    return sum(hours) if hours else None


def calculate_total_distance(msgs: list[Msg]) -> float | None:
    distances = [msg["meters_to_prev"] for msg in msgs if msg["meters_to_prev"] is not None]
    return sum(distances) if distances else None


def hourly_buckets(msgs: list[Msg], slow_threshold: float) -> list[dict[str, Any]]:
    buckets = []
    key = lambda msg: msg["timestamp"].strftime("%Y-%m-%d-%H")  # noqa: E731
    for _, group in groupby(sorted(msgs, key=lambda m: m["timestamp"]), key=key):
        sorted_messages = list(group)
        bucket: dict[str, Any] = {
            "start_timestamp": sorted_messages[0]["timestamp"],
            "end_timestamp": sorted_messages[-1]["timestamp"],
            "msgs": sorted_messages,
        }
        bucket["hours"] = calculate_total_hours(bucket["msgs"])
        bucket["meters_to_prev"] = calculate_total_distance(bucket["msgs"])
        if bucket["hours"] and bucket["meters_to_prev"] is not None:
            bucket["avg_speed_knots"] = bucket["meters_to_prev"] / bucket["hours"] / 1852
        else:
            bucket["avg_speed_knots"] = None
        bucket["slow"] = bucket["avg_speed_knots"] is not None and bucket["avg_speed_knots"] < slow_threshold
        buckets.append(bucket)
    return buckets


def calculate_slow_groups(buckets: list[dict[str, Any]]) -> list[list[Msg]]:
    today_buckets = sorted(buckets, key=lambda bucket: bucket["start_timestamp"])
    result = []
    current_group: list[Msg] = []
    for i in range(0, len(today_buckets)):
        current_bucket = today_buckets[i]
        if current_bucket["slow"] and not current_group:
            previous_bucket = today_buckets[i - 1] if i > 0 else None
            if previous_bucket:
                current_group.append(previous_bucket["msgs"][-1])
            current_group.extend(current_bucket["msgs"])
        elif current_bucket["slow"] and current_group:
            current_group.extend(current_bucket["msgs"])
        elif not current_bucket["slow"] and current_group:
            result.append(current_group)
            current_group = []
    if current_group:
        result.append(current_group)
    return result


def calculate_avg_speed_in_knots(msgs: list[Msg]) -> float | None:
    hours = calculate_total_hours(msgs)
    distance_m = calculate_total_distance(msgs)
    if hours and distance_m is not None:
        return distance_m / hours / 1852
    return None


def calculate_avg_distance_from_shore_nm(msgs: list[Msg]) -> float | None:
    msgs_with_distance = [msg for msg in msgs if msg["distance_from_shore_m"] is not None]
    if not msgs_with_distance:
        return None
    hours = calculate_total_hours(msgs_with_distance)
    if hours:
        weighted_sum = sum(msg["distance_from_shore_m"] * msg["hours"] for msg in msgs_with_distance if msg["hours"])
        return weighted_sum / hours / 1852
    total_sum = sum(msg["distance_from_shore_m"] for msg in msgs_with_distance)
    return total_sum / len(msgs_with_distance) / 1852


def loitering_event(msgs: list[Msg]) -> dict[str, Any]:
    return {
        "loitering_start_timestamp": msgs[0]["timestamp"],
        "loitering_end_timestamp": msgs[-1]["timestamp"],
        "avg_speed_knots": calculate_avg_speed_in_knots(msgs[1:]),
        "loitering_hours": calculate_total_hours(msgs[1:]),
        "tot_distance_nm": (calculate_total_distance(msgs[1:]) or 0.0) / 1852,
        "avg_distance_from_shore_nm": calculate_avg_distance_from_shore_nm(msgs),
        "start_lon": msgs[0]["lon"],
        "start_lat": msgs[0]["lat"],
        "end_lon": msgs[-1]["lon"],
        "end_lat": msgs[-1]["lat"],
    }


def loitering_events(msgs: list[Msg], slow_threshold: float = 2.0) -> list[dict[str, Any]]:
    groups = calculate_slow_groups(hourly_buckets(msgs, slow_threshold))
    return [loitering_event(g) for g in groups if len(g) > 1]
