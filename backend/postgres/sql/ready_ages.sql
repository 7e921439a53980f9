-- ready_ages: for each tube of $2, how long the job a reserve would take next from it has been
-- ready, in microseconds: the job peek_ready.sql finds (the best (priority, id) of the ready
-- jobs and of the due ones not promoted yet), ready since its ready_at, or since its due time
-- if not promoted yet. A tube without such a job, or whose job's ready_at is unknown (made
-- ready by an older gateway), is left out. Each tube costs a few index probes.
-- $1 now (NULL: database clock), $2 tubes.
SELECT t.name, greatest(0, (extract(epoch FROM {{now}} - h.since) * 1000000)::bigint)
FROM unnest($2::text[]) AS t(name)
CROSS JOIN LATERAL (
    SELECT since FROM (
        (SELECT priority, id, ready_at AS since FROM {{schema}}.jobs
         WHERE tube = t.name AND state = 1
         ORDER BY priority, id LIMIT 1)
        UNION ALL
        (SELECT priority, id, due_at FROM (
            SELECT priority, id, due_at FROM {{schema}}.jobs
            WHERE tube = t.name AND state = 2 AND due_at <= {{now}}
            ORDER BY due_at LIMIT 501) d
         ORDER BY priority, id LIMIT 1)
        UNION ALL
        (SELECT priority, id, due_at FROM (
            SELECT priority, id, due_at FROM {{schema}}.jobs
            WHERE tube = t.name AND state = 3 AND due_at <= {{now}}
            ORDER BY due_at LIMIT 501) e
         ORDER BY priority, id LIMIT 1)
    ) c
    ORDER BY priority, id LIMIT 1
) h
WHERE h.since IS NOT NULL
