-- 001_init: jobs, tubes, sessions, process leases and the store-wide counters.
-- {{schema}} is replaced by the quoted schema name before this runs.

CREATE SEQUENCE {{schema}}.job_ids;
-- Bury order: kick and peek-buried take the lowest buried_seq of a tube.
CREATE SEQUENCE {{schema}}.buried_seq;

-- One row per existing tube. The reference counts (using, watching, jobs) decide when a tube is
-- garbage-collected; they live on the row so that every change to them is serialised by its row
-- lock, and a delete "WHERE refs are zero" is re-checked against the latest row version.
CREATE TABLE {{schema}}.tubes (
    name           text PRIMARY KEY,
    -- Position in list-tubes: appended on creation; see 002 for removals.
    list_pos       bigserial NOT NULL,
    using_count    bigint NOT NULL DEFAULT 0,
    watching_count bigint NOT NULL DEFAULT 0,
    jobs_count     bigint NOT NULL DEFAULT 0,
    total_jobs     bigint NOT NULL DEFAULT 0,
    cmd_delete     bigint NOT NULL DEFAULT 0,
    cmd_pause      bigint NOT NULL DEFAULT 0,
    pause_us       bigint NOT NULL DEFAULT 0,
    pause_until    timestamptz
) WITH (
    -- Tube rows are rewritten by every put/delete batch: leave room for HOT updates (no indexed
    -- column changes) and vacuum them often.
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

INSERT INTO {{schema}}.tubes (name) VALUES ('default');

-- state: 1 ready, 2 delayed, 3 reserved, 4 buried (backend.State).
-- due_at: delayed → when it becomes ready; reserved → its TTR deadline; else NULL.
CREATE TABLE {{schema}}.jobs (
    id          bigint PRIMARY KEY,
    tube        text NOT NULL,
    state       smallint NOT NULL,
    priority    bigint NOT NULL,
    delay_us    bigint NOT NULL,
    ttr_us      bigint NOT NULL,
    created_at  timestamptz NOT NULL,
    due_at      timestamptz,
    buried_seq  bigint,
    reserved_by text,
    reserves    integer NOT NULL DEFAULT 0,
    timeouts    integer NOT NULL DEFAULT 0,
    releases    integer NOT NULL DEFAULT 0,
    buries      integer NOT NULL DEFAULT 0,
    kicks       integer NOT NULL DEFAULT 0,
    body        bytea NOT NULL
) WITH (
    -- Every state change touches an indexed column, so updates are never HOT and fillfactor would
    -- only waste space; churn is handled by vacuuming early and without throttling.
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);

-- Reserve and peek-ready: the best (priority, id) of a tube.
CREATE INDEX jobs_ready ON {{schema}}.jobs (tube, priority, id) WHERE state = 1;
-- Promotion of due delayed jobs, peek-delayed and kick of delayed jobs.
CREATE INDEX jobs_delayed_due ON {{schema}}.jobs (due_at) WHERE state = 2;
CREATE INDEX jobs_delayed_tube ON {{schema}}.jobs (tube, due_at, id) WHERE state = 2;
-- TTR expiry, and the next deadline in a tube for waiting reserves.
CREATE INDEX jobs_reserved_due ON {{schema}}.jobs (due_at) WHERE state = 3;
CREATE INDEX jobs_reserved_tube ON {{schema}}.jobs (tube, due_at) WHERE state = 3;
-- EndSession and the DEADLINE_SOON check: the reservations of a session.
CREATE INDEX jobs_reserved_by ON {{schema}}.jobs (reserved_by, due_at) WHERE state = 3;
-- Kick and peek-buried: the oldest buried job of a tube.
CREATE INDEX jobs_buried ON {{schema}}.jobs (tube, buried_seq) WHERE state = 4;

-- Gateway processes seen by BeginSession; a lease that is not renewed marks a dead process whose
-- sessions any other gateway ends.
CREATE TABLE {{schema}}.processes (
    process     text PRIMARY KEY,
    lease_until timestamptz NOT NULL
) WITH (fillfactor = 50);

CREATE TABLE {{schema}}.sessions (
    id        text PRIMARY KEY,
    process   text NOT NULL,
    used_tube text NOT NULL
);
CREATE INDEX sessions_process ON {{schema}}.sessions (process);

CREATE TABLE {{schema}}.session_watches (
    session_id text NOT NULL,
    tube       text NOT NULL,
    PRIMARY KEY (session_id, tube)
);

-- Store-wide counters: one row.
CREATE TABLE {{schema}}.counters (
    id           integer PRIMARY KEY CHECK (id = 1),
    total_jobs   bigint NOT NULL DEFAULT 0,
    job_timeouts bigint NOT NULL DEFAULT 0
) WITH (
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);
INSERT INTO {{schema}}.counters (id) VALUES (1);
