-- import: stores jobs from another store with their ids, states, counters and age, each with
-- its key record (backend.Admin.Import); the ids are decided by the caller (import_seen,
-- import_taken, import_ids in the same transaction). Buried jobs go to the end of their tube's
-- buried list in input order. Tubes that got ready jobs are announced to every gateway.
-- $1 now (NULL: database clock), $2 keys, $3 ids, $4 tubes, $5 states (1 ready, 2 delayed,
-- 4 buried), $6 priorities, $7 TTRs µs, $8 delays µs, $9 time left µs (delayed), $10 ages µs,
-- $11 reserves, $12 timeouts, $13 releases, $14 buries, $15 kicks, $16 bodies.
-- With policies, each job is filed under its tube's: its expiry and, in a unique tube, its
-- body's hash.
WITH input AS (
    SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::smallint[], $6::bigint[],
                         $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::int[],
                         $12::int[], $13::int[], $14::int[], $15::int[], $16::bytea[])
        WITH ORDINALITY AS i(key, id, tube, state, priority, ttr_us, delay_us, left_us, age_us,
                             reserves, timeouts, releases, buries, kicks, body, ord)
), tubes AS (
    INSERT INTO {{schema}}.tubes AS t (name, jobs_count, total_jobs)
    SELECT tube, count(*), count(*) FROM input GROUP BY tube ORDER BY tube
    ON CONFLICT (name) DO UPDATE
    SET jobs_count = t.jobs_count + excluded.jobs_count, total_jobs = t.total_jobs + excluded.total_jobs
    RETURNING t.name
), inserted AS (
    INSERT INTO {{schema}}.jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at,
                                 buried_seq, reserves, timeouts, releases, buries, kicks, body/*P*/,
                                 expires_at, body_hash/*-P*/)
    SELECT id, tube, state, priority, delay_us, ttr_us, {{now}} - age_us * interval '1 microsecond',
           CASE WHEN state = 2 THEN {{now}} + left_us * interval '1 microsecond' END,
           CASE WHEN state = 4 THEN nextval('{{schema}}.buried_seq') END,
           reserves, timeouts, releases, buries, kicks, body/*P*/,
           CASE WHEN p.expire_after_us > 0
                THEN {{now}} - age_us * interval '1 microsecond' + p.expire_after_us * interval '1 microsecond' END,
           CASE WHEN p.uniq AND state IN (1, 2) THEN sha256(body) END/*-P*/
    FROM (SELECT * FROM input ORDER BY ord) o/*P*/
    CROSS JOIN LATERAL {{schema}}.tube_policy(o.tube) p/*-P*/
), keyed AS (
    INSERT INTO {{schema}}.imported (key, job_id) SELECT key, id FROM input
), counted AS (
    -- After the tube rows, as every statement takes them (see lock_tubes.sql): the condition
    -- runs tubes first. Left to itself, this CTE ran before tubes (PostgreSQL finishes unread
    -- CTEs last one first) and held this row while it waited for a tube row, which another
    -- gateway's batch with deletes held while it waited for this one: a deadlock.
    UPDATE {{schema}}.counters SET total_jobs = total_jobs + (SELECT count(*) FROM input) WHERE id = 1
      AND (SELECT count(*) FROM tubes) >= 0
)
SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube), tube, count(*)
FROM input WHERE state = 1 GROUP BY tube
