"""Vessel hours per cell, as maritime planners measure density (plain Python): the time vessels
spend in each cell, by ship type, instead of how often they were heard.

- **Segments.** The time between two consecutive fixes of a vessel's track
  (:mod:`ais_pipeline.rules.tracks`: fixes held until the watermark passes them, bad fixes left
  out), when the gap is at most the cap (``max_gap_ms``, 600 s by default); a longer gap is a hole
  in coverage, gives nothing and ends the track.
- **Spread.** A segment's time goes to the cells its straight line crosses, by the length inside
  each (:mod:`ais_pipeline.rules.spread`), and is split at pane boundaries
  (:func:`split_at_panes`), so each window holds the time that falls inside it.
- **Ship type.** The category of the vessel's most recent static report when the segment's first
  position was kept (a CSV row's own vessel type), grouped as :data:`CATEGORIES` says;
  ``unknown`` without one.
"""

from __future__ import annotations

MAX_GAP_MS = 600_000

# AIS ship and cargo type codes (ITU-R M.1371, message 5 / 24B) -> category, in the spirit of
# EMODnet's vessel density maps. Codes not listed are "other"; no static report: "unknown".
CATEGORIES: tuple[tuple[str, tuple[range, ...]], ...] = (
    ("fishing", (range(30, 31),)),
    ("service", (range(31, 33), range(50, 60))),  # towing, pilot, SAR, tug, port tender, law enforcement, medical
    ("sailing", (range(36, 37),)),
    ("pleasure", (range(37, 38),)),
    ("high_speed", (range(40, 50),)),
    ("passenger", (range(60, 70),)),
    ("cargo", (range(70, 80),)),
    ("tanker", (range(80, 90),)),
)
OTHER, UNKNOWN = "other", "unknown"
ALL_CATEGORIES = (*(name for name, _ in CATEGORIES), OTHER, UNKNOWN)

# Archive rows that name the ship type instead of giving its code (the Danish Maritime
# Authority's "Ship type" column), lower-cased: the code's category. Any other name is "other".
NAMED_TYPES = {
    "fishing": "fishing",
    "towing": "service", "towing long/wide": "service", "tug": "service", "pilot": "service", "sar": "service",
    "port tender": "service", "anti-pollution": "service", "law enforcement": "service", "medical": "service",
    "not party to conflict": "service",
    "sailing": "sailing",
    "pleasure": "pleasure",
    "hsc": "high_speed",
    "passenger": "passenger",
    "cargo": "cargo",
    "tanker": "tanker",
}  # fmt: skip


def ship_category(code: int | None) -> str:
    """The category of an AIS ship type code; ``unknown`` for none."""
    if code is None:
        return UNKNOWN
    for name, ranges in CATEGORIES:
        if any(code in r for r in ranges):
            return name
    return OTHER


def static_category(fields: dict[str, object]) -> str | None:
    """The category a static report's decoded fields give (``ship_type``: a code, or an archive
    row's type name); None when they hold no ship type (a 24A report: name only)."""
    value = fields.get("ship_type")
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return OTHER
    if isinstance(value, int):
        return ship_category(value)
    if isinstance(value, float) and value.is_integer():
        return ship_category(int(value))
    return NAMED_TYPES.get(str(value).strip().lower(), OTHER)


def split_at_panes(start_ms: int, end_ms: int, pane_ms: int) -> list[tuple[int, int]]:
    """The time from ``start_ms`` to ``end_ms`` as (pane start, milliseconds in that pane)."""
    out = []
    t = start_ms
    while t < end_ms:
        pane = t - t % pane_ms
        upto = min(end_ms, pane + pane_ms)
        out.append((pane, upto - t))
        t = upto
    return out
