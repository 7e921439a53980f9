-- put_policy: put.sql for a store with policies. Besides what put.sql does, each job gets its
-- tube's policy: its expiry (created + expire-after) and, in a unique tube, its body's hash; and
-- a put into a unique tube whose body equals that of a ready or delayed job of the tube (found
-- through jobs_body_hash, then compared whole), or of an earlier put of this batch, stores
-- nothing and answers that job's id. The caller holds the advisory locks of the batch's unique
-- tubes (lock_policy_tubes.sql), so a duplicate another gateway committed is seen.
-- $1 now (NULL: database clock), $2 tubes, $3 priorities, $4 delays (µs), $5 TTRs (µs), $6 bodies,
-- $7 the caller's own processes.
-- Returns (ord, id, heads, deduped): put.sql's, and whether the id is an existing job's.
WITH input AS (
    SELECT i.*, coalesce(p.uniq, false) AS uniq, p.expire_after_us,
        CASE WHEN p.uniq THEN sha256(i.body) END AS hash
    FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bytea[])
        WITH ORDINALITY AS i(tube, priority, delay_us, ttr_us, body, ord)
    CROSS JOIN LATERAL {{schema}}.tube_policy(i.tube) p
), firsts AS (
    -- In a unique tube, the first put of each body in this batch.
    SELECT i.ord, min(i.ord) OVER (PARTITION BY i.tube, i.body) AS first FROM input i WHERE i.uniq
), existing AS (
    SELECT f.ord, (SELECT j.id FROM {{schema}}.jobs j
                   WHERE j.tube = i.tube AND j.body_hash = i.hash AND j.state IN (1, 2) AND j.body = i.body
                   ORDER BY j.id LIMIT 1) AS id
    FROM firsts f JOIN input i ON i.ord = f.ord WHERE f.first = f.ord
), fresh AS (
    SELECT i.* FROM input i
    WHERE NOT i.uniq OR (SELECT e.id FROM existing e WHERE e.ord = i.ord) IS NULL
        AND (SELECT f.first FROM firsts f WHERE f.ord = i.ord) = i.ord
), numbered AS (
    SELECT i.*, nextval('{{schema}}.job_ids') AS id,
        i.delay_us > 0 AND NOT EXISTS (
            SELECT 1 FROM {{schema}}.jobs j WHERE j.tube = i.tube AND j.state = 2
              AND j.due_at <= {{now}} + i.delay_us * interval '1 microsecond') AS heads
    FROM fresh i ORDER BY ord
), tubes AS (
    INSERT INTO {{schema}}.tubes AS t (name, jobs_count, total_jobs)
    SELECT tube, count(*), count(*) FROM fresh GROUP BY tube ORDER BY tube
    ON CONFLICT (name) DO UPDATE
    SET jobs_count = t.jobs_count + excluded.jobs_count, total_jobs = t.total_jobs + excluded.total_jobs
), inserted AS (
    INSERT INTO {{schema}}.jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, ready_at, body,
        body_hash, expires_at)
    SELECT id, tube, CASE WHEN delay_us > 0 THEN 2 ELSE 1 END, priority, delay_us, ttr_us, {{now}},
           CASE WHEN delay_us > 0 THEN {{now}} + delay_us * interval '1 microsecond' END,
           CASE WHEN delay_us = 0 THEN {{now}} END, body, hash,
           CASE WHEN expire_after_us > 0 THEN {{now}} + expire_after_us * interval '1 microsecond' END
    FROM numbered
), counted AS (
    UPDATE {{schema}}.counters SET total_jobs = total_jobs + (SELECT count(*) FROM fresh) WHERE id = 1
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube)
    FROM numbered WHERE (delay_us = 0 OR heads)
      AND EXISTS (SELECT 1 FROM {{schema}}.processes
                  WHERE lease_until > now() AND process <> ALL($7::text[]))
    GROUP BY tube
)
SELECT ord, id, heads, false FROM numbered
WHERE (SELECT count(*) FROM notified) >= 0
UNION ALL
-- A duplicate: of a job already stored, or of this batch's first put of its body.
SELECT f.ord, coalesce(e.id, n.id), false, true
FROM firsts f
LEFT JOIN existing e ON e.ord = f.first
LEFT JOIN numbered n ON n.ord = f.first
WHERE f.ord <> f.first OR e.id IS NOT NULL
ORDER BY 1
