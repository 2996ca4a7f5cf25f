-- The tables of `ais-pipeline run --postgres URL` (created when missing, before the job starts;
-- also `psql -f ais_pipeline/schema.sql`). One table per output, and one row per run.
--
-- Idempotent to the row: positions, static reports, late records, bad fixes and dead letters are inserted
-- on their `id` (a stable UUID of what the record is, see docs/postgres.md); a repeat does
-- nothing. A gap is upserted on its `id` while the stored row is open: its closed record wins. An aggregate is upserted on its window (kind, size, slide, geohash precision), cell and
-- start only when it is a newer firing than the stored one. Times are timestamptz (UTC, milliseconds).

CREATE TABLE IF NOT EXISTS ais_positions (
    id          uuid PRIMARY KEY,
    mmsi        bigint NOT NULL,
    msg_type    smallint NOT NULL,
    event_time  timestamptz NOT NULL,
    lat         double precision NOT NULL,
    lon         double precision NOT NULL,
    sog         double precision,
    cog         double precision,
    heading     smallint,
    receiver    text,
    cell        text NOT NULL
);
CREATE INDEX IF NOT EXISTS ais_positions_mmsi_time ON ais_positions (mmsi, event_time);
CREATE INDEX IF NOT EXISTS ais_positions_time ON ais_positions (event_time);
CREATE INDEX IF NOT EXISTS ais_positions_cell_time ON ais_positions (cell, event_time);

CREATE TABLE IF NOT EXISTS ais_static (
    id          uuid PRIMARY KEY,
    mmsi        bigint NOT NULL,
    msg_type    smallint NOT NULL,
    event_time  timestamptz NOT NULL,
    receiver    text,
    fields      jsonb NOT NULL  -- the decoded fields (shipname, callsign, destination, ...)
);
CREATE INDEX IF NOT EXISTS ais_static_mmsi_time ON ais_static (mmsi, event_time);

CREATE TABLE IF NOT EXISTS ais_aggregates (
    window_kind  text NOT NULL,  -- tumbling or sliding
    cell         text NOT NULL,
    window_start timestamptz NOT NULL,
    window_end   timestamptz NOT NULL,
    reports      integer NOT NULL,
    vessels      integer NOT NULL,
    avg_sog      double precision,
    revision     integer NOT NULL,
    vessel_hours double precision,  -- time vessels spent in the cell, hours (null: loaded from older files)
    by_type      jsonb,  -- per ship type category: vessels, reports, vessel_hours
    window_seconds    integer NOT NULL,  -- the window's size
    slide_seconds     integer NOT NULL,  -- the sliding windows' slide; a tumbling window's size
    geohash_precision smallint NOT NULL,  -- the length of cell
    sog_sum      double precision,  -- the SOG of the reports that had one, added up, knots (null: older rows)
    sog_reports  integer,  -- how many reports had a SOG (avg_sog = sog_sum / sog_reports)
    PRIMARY KEY (window_kind, window_seconds, slide_seconds, geohash_precision, cell, window_start)
);
-- (A table made by an earlier version gets the columns it lacks, and this key, from the job:
-- ais_pipeline/postgres.py.)
CREATE INDEX IF NOT EXISTS ais_aggregates_kind_start ON ais_aggregates (window_kind, window_start);
CREATE INDEX IF NOT EXISTS ais_aggregates_cell ON ais_aggregates (cell, window_start);

CREATE TABLE IF NOT EXISTS ais_late (
    id          uuid PRIMARY KEY,
    mmsi        bigint NOT NULL,
    msg_type    smallint NOT NULL,
    event_time  timestamptz NOT NULL,
    lat         double precision NOT NULL,
    lon         double precision NOT NULL,
    sog         double precision,
    cog         double precision,
    heading     smallint,
    receiver    text,
    cell        text NOT NULL,
    window_kind text NOT NULL  -- the window kind the report was too late for
);
CREATE INDEX IF NOT EXISTS ais_late_time ON ais_late (event_time);
CREATE INDEX IF NOT EXISTS ais_late_mmsi_time ON ais_late (mmsi, event_time);

CREATE TABLE IF NOT EXISTS ais_bad_fixes (
    id          uuid PRIMARY KEY,
    mmsi        bigint NOT NULL,
    msg_type    smallint NOT NULL,
    event_time  timestamptz NOT NULL,
    lat         double precision NOT NULL,
    lon         double precision NOT NULL,
    sog         double precision,
    cog         double precision,
    heading     smallint,
    receiver    text,
    cell        text NOT NULL,
    implied_knots  double precision,  -- the speed it would take from the fix it conflicted with (null: same time)
    conflicts_with jsonb NOT NULL  -- that fix: timestamp, lat, lon, distance_nm, seconds
);
CREATE INDEX IF NOT EXISTS ais_bad_fixes_mmsi_time ON ais_bad_fixes (mmsi, event_time);

CREATE TABLE IF NOT EXISTS ais_gaps (
    id             uuid PRIMARY KEY,  -- the same for the open gap and the closed one
    mmsi           bigint NOT NULL,
    ship_type      text NOT NULL,
    start_time     timestamptz NOT NULL,
    start_lat      double precision NOT NULL,
    start_lon      double precision NOT NULL,
    start_shore_nm double precision NOT NULL,
    end_time       timestamptz,  -- null while open
    end_lat        double precision,
    end_lon        double precision,
    end_shore_nm   double precision,
    hours          double precision NOT NULL,  -- an open gap's: up to when it was known
    positions_before integer NOT NULL,  -- in the 12 h before the start
    open           boolean NOT NULL,
    suspected_disabling boolean NOT NULL,
    as_of          timestamptz NOT NULL,  -- the watermark that made the record
    coverage_cell  text NOT NULL,  -- the 1-degree cell of the start: S21E075
    coverage_reports integer NOT NULL,  -- other vessels' reports heard there during the gap
    coverage_vessels integer NOT NULL  -- and how many vessels they came from
);
CREATE INDEX IF NOT EXISTS ais_gaps_mmsi_time ON ais_gaps (mmsi, start_time);

CREATE TABLE IF NOT EXISTS ais_port_visits (
    id             uuid PRIMARY KEY,  -- the same from the visit's first event to its exit
    mmsi           bigint NOT NULL,
    ship_type      text NOT NULL,
    lat            double precision NOT NULL,  -- the port: the anchorage of the first event
    lon            double precision NOT NULL,
    start_anchorage_id text NOT NULL,
    start_label    text NOT NULL,
    start_sublabel text NOT NULL,
    start_iso3     text NOT NULL,
    end_anchorage_id text,  -- the exit's anchorage; null while open
    end_label      text,
    end_sublabel   text,
    end_iso3       text,
    start_time     timestamptz NOT NULL,
    end_time       timestamptz,  -- null while open
    hours          double precision NOT NULL,  -- first event to last
    confidence     smallint NOT NULL,  -- GFW's: 1-4
    events         jsonb NOT NULL,  -- [{type, time, lat, lon, anchorage_id}]
    open           boolean NOT NULL,
    as_of          timestamptz NOT NULL  -- the event time the record was written at
);
CREATE INDEX IF NOT EXISTS ais_port_visits_mmsi_time ON ais_port_visits (mmsi, start_time);
CREATE INDEX IF NOT EXISTS ais_port_visits_port_time ON ais_port_visits (start_label, start_time);

CREATE TABLE IF NOT EXISTS ais_loitering (
    id             uuid PRIMARY KEY,  -- the same from the event's first record to its close
    mmsi           bigint NOT NULL,
    ship_type      text NOT NULL,
    lat            double precision NOT NULL,  -- the mean place of its positions
    lon            double precision NOT NULL,
    start_time     timestamptz NOT NULL,
    end_time       timestamptz,  -- null while open
    hours          double precision NOT NULL,  -- GFW's: the time of its positions after the first
    avg_speed_kn   double precision,  -- distance over hours
    distance_nm    double precision NOT NULL,
    shore_nm       double precision NOT NULL,  -- mean distance from shore, weighted by hours
    start_lat      double precision NOT NULL,
    start_lon      double precision NOT NULL,
    end_lat        double precision NOT NULL,
    end_lon        double precision NOT NULL,
    published      boolean NOT NULL,  -- long enough and far enough from shore, now
    open           boolean NOT NULL,
    as_of          timestamptz NOT NULL  -- the event time the record was written at
);
CREATE INDEX IF NOT EXISTS ais_loitering_mmsi_time ON ais_loitering (mmsi, start_time);

CREATE TABLE IF NOT EXISTS ais_encounters (
    id                 uuid PRIMARY KEY,  -- the same from the encounter's first record to its close
    mmsi_1             bigint NOT NULL,  -- the vessel of the lesser track name
    mmsi_2             bigint NOT NULL,
    ship_type_1        text NOT NULL,
    ship_type_2        text NOT NULL,
    lat                double precision NOT NULL,  -- the mean place, weighted by duration
    lon                double precision NOT NULL,
    start_time         timestamptz NOT NULL,
    end_time           timestamptz,  -- null while open
    hours              double precision NOT NULL,
    median_distance_km double precision NOT NULL,
    median_speed_kn    double precision NOT NULL,  -- implied, between the 10-minute marks
    points_1           integer NOT NULL,  -- the positions each vessel's marks stand for
    points_2           integer NOT NULL,
    shore_nm           double precision NOT NULL,
    port_km            double precision,  -- to the nearest anchorage; null beyond 50 km
    published          boolean NOT NULL,  -- long, slow, away from ports and at sea, now
    open               boolean NOT NULL,
    as_of              timestamptz NOT NULL  -- the event time the record was written at
);
CREATE INDEX IF NOT EXISTS ais_encounters_mmsi_1_time ON ais_encounters (mmsi_1, start_time);
CREATE INDEX IF NOT EXISTS ais_encounters_mmsi_2_time ON ais_encounters (mmsi_2, start_time);

CREATE TABLE IF NOT EXISTS ais_dead_letter (
    id          uuid PRIMARY KEY,
    reason      text NOT NULL,
    receiver    text,
    detail      text,
    raw         text NOT NULL
);
CREATE INDEX IF NOT EXISTS ais_dead_letter_reason ON ais_dead_letter (reason);

-- The positions a live run wrote at once and withdrew (judged bad fixes): a withdrawn id is deleted
-- from ais_positions and never inserted again, whichever of the two writes comes first.
CREATE TABLE IF NOT EXISTS ais_withdrawn (
    id           uuid PRIMARY KEY,
    output       text NOT NULL,  -- the output the record was withdrawn from: positions
    reason       text NOT NULL,  -- bad_fixes: its track judged it a bad fix
    withdrawn_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS ais_runs (
    run_id      uuid PRIMARY KEY,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    source      text NOT NULL,  -- the input file or directory, or kafka:<topic>
    summary     json            -- summary.json of a file run, as written; null while a run goes on
);
CREATE INDEX IF NOT EXISTS ais_runs_started ON ais_runs (started_at);
