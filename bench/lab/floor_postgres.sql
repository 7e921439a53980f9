-- floor_postgres.sql: the least a PostgreSQL job queue can do per operation, for the lab's
-- floor (floor.go). One table, one partial index for the ready order, no sessions, counters,
-- wake-ups, delays or TTR expiry: a lower bound of what beangate's own statements
-- (backend/postgres/sql) cost, not a queue anyone could use. Statements are separated by a line
-- holding only "-- name: <name>"; {{schema}} is the scratch schema the tool creates and drops.

-- name: schema
CREATE SCHEMA {{schema}};
CREATE TABLE {{schema}}.jobs (
    id bigserial PRIMARY KEY,
    state smallint NOT NULL,
    priority bigint NOT NULL,
    ttr_us bigint NOT NULL,
    due_at timestamptz,
    reserved_by text,
    body bytea NOT NULL);
CREATE INDEX ON {{schema}}.jobs (priority, id) WHERE state = 1;
CREATE INDEX ON {{schema}}.jobs (id) WHERE state = 3;

-- name: put
-- $1 how many, $2 the body; answers the new ids, as a put must
INSERT INTO {{schema}}.jobs (state, priority, ttr_us, body)
SELECT 1, 1024, 60000000, $2::bytea FROM generate_series(1, $1::int)
RETURNING id

-- name: reserve
-- $1 how many: the best ready jobs, as concurrent reserves take them (SKIP LOCKED)
UPDATE {{schema}}.jobs SET state = 3, reserved_by = 'floor', due_at = now() + ttr_us * interval '1 microsecond'
WHERE id = ANY(ARRAY(
    SELECT id FROM {{schema}}.jobs WHERE state = 1
    ORDER BY priority, id LIMIT $1::int FOR UPDATE SKIP LOCKED))
RETURNING id, body

-- name: reserve alone
-- the same, in a round trip of reserves only: a reservation is not worth a WAL flush, as
-- beangate's reserve commits it (after a crash the job is ready again)
UPDATE {{schema}}.jobs SET state = 3, reserved_by = 'floor', due_at = now() + ttr_us * interval '1 microsecond'
WHERE id = ANY(ARRAY(
    SELECT id FROM {{schema}}.jobs WHERE state = 1
    ORDER BY priority, id LIMIT $1::int FOR UPDATE SKIP LOCKED))
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
RETURNING id, body

-- name: delete
-- $1 how many reserved jobs (any); answers their ids
DELETE FROM {{schema}}.jobs
WHERE id = ANY(ARRAY(SELECT id FROM {{schema}}.jobs WHERE state = 3 LIMIT $1::int FOR UPDATE SKIP LOCKED))
RETURNING id
