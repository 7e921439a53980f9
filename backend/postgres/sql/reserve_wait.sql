-- reserve_wait: what a reserve that found nothing needs in order to wait: the database time, the
-- earliest TTR deadline among session $3's live reservations (for DEADLINE_SOON), and the next
-- moment something may become reservable in the watched tubes $2: a delayed job's time, a
-- reservation's deadline, or a pause's end.
-- $1 now (NULL: database clock), $2 tubes, $3 session.
SELECT
    {{now}} AS now,
    (SELECT min(due_at) FROM {{schema}}.jobs
     WHERE state = 3 AND reserved_by = $3::text AND due_at > {{now}}) AS own_deadline,
    (SELECT min(at) FROM (
        SELECT (SELECT min(j.due_at) FROM {{schema}}.jobs j
                WHERE j.state = 2 AND j.tube = w.name AND j.due_at > {{now}}) AS at
        FROM unnest($2::text[]) AS w(name)
        UNION ALL
        SELECT (SELECT min(j.due_at) FROM {{schema}}.jobs j
                WHERE j.state = 3 AND j.tube = w.name AND j.due_at > {{now}})
        FROM unnest($2::text[]) AS w(name)
        UNION ALL
        SELECT pause_until FROM {{schema}}.tubes
        WHERE name = ANY($2::text[]) AND pause_until > {{now}}
    ) next) AS next_due
