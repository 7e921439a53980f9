-- move_jobs: moves the first $5 jobs of tube $2 in state $4 (1 ready, 2 delayed, 4 buried), in
-- that state's order, to tube $3 (created if need be), keeping id, priority, state, due time and
-- counters; buried ones join the end of $3's buried jobs in their order (new bury sequence
-- numbers). One index range as delete_jobs.sql; rows locked elsewhere are skipped. Both tube rows
-- are updated in one statement in name order, as put locks them, so the two cannot deadlock.
-- Tube $3 is announced when ready jobs (n of them) or delayed ones (0: every waiter looks again at
-- the due times) arrived.
-- With policies, the jobs are filed under $3's: their expiry and, in a unique tube, their body's
-- hash.
-- $1 now (NULL: database clock), $2 from, $3 to, $4 state, $5 limit.
-- Returns how many moved and whether $2 is left without references (the caller garbage-collects
-- it).
WITH picked AS (
    SELECT * FROM (
        SELECT id, 0::bigint AS ord FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 1 AND $4::int = 1
        ORDER BY priority, id LIMIT $5::bigint FOR UPDATE SKIP LOCKED) r
    UNION ALL
    SELECT * FROM (
        SELECT id, 0::bigint FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 2 AND due_at > {{now}} AND $4::int = 2
        ORDER BY due_at, id LIMIT $5::bigint FOR UPDATE SKIP LOCKED) d
    UNION ALL
    SELECT * FROM (
        SELECT id, buried_seq FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 4 AND $4::int = 4
        ORDER BY buried_seq LIMIT $5::bigint FOR UPDATE SKIP LOCKED) b
), renumbered AS (
    -- nextval in the order of the sorted subquery: the moved buried jobs keep their order.
    SELECT id, CASE WHEN $4::int = 4 THEN nextval('{{schema}}.buried_seq') END AS seq
    FROM (SELECT id, ord FROM picked ORDER BY ord, id) o
), moved AS (
    UPDATE {{schema}}.jobs j SET tube = $3::text, buried_seq = r.seq/*P*/,
        expires_at = CASE WHEN j.expires_at = 'infinity' THEN j.expires_at
                          WHEN p.expire_after_us > 0 THEN j.created_at + p.expire_after_us * interval '1 microsecond' END,
        body_hash = CASE WHEN p.uniq THEN coalesce(j.body_hash, sha256(j.body)) ELSE j.body_hash END/*-P*/
    FROM renumbered r/*P*/
    CROSS JOIN LATERAL {{schema}}.tube_policy($3::text) p/*-P*/
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND r.id = j.id
    RETURNING j.id
), n AS (
    SELECT count(*) AS n FROM moved
), counted AS (
    INSERT INTO {{schema}}.tubes AS t (name, jobs_count)
    SELECT name, d FROM (VALUES ($2::text, -(SELECT n FROM n)), ($3::text, (SELECT n FROM n))) v(name, d)
    WHERE (SELECT n FROM n) > 0
    ORDER BY name
    ON CONFLICT (name) DO UPDATE SET jobs_count = t.jobs_count + excluded.jobs_count
    RETURNING t.name, t.jobs_count = 0 AND t.using_count = 0 AND t.watching_count = 0 AS unreferenced
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || CASE WHEN $4::int = 1 THEN n ELSE 0 END || ' ' || $3::text)
    FROM n WHERE n > 0 AND $4::int IN (1, 2)
)
SELECT (SELECT n FROM n), coalesce((SELECT unreferenced FROM counted WHERE name = $2::text), false),
       (SELECT count(*) FROM notified)
