-- job_holder: the session holding job $2 reserved, NULL when it is not reserved now (a
-- reservation past its deadline is ready, as job_stats reads it); no row when there is no job.
-- $1 now (NULL: database clock), $2 id.
SELECT CASE WHEN state = 3 AND due_at > {{now}} THEN reserved_by END
FROM {{schema}}.jobs WHERE id = $2::bigint
