-- lock_tubes: the first statement of a write batch that both puts ($1: the puts' tubes) and
-- deletes ($2: job ids). Every statement that locks several rows takes job rows first, in id
-- order, then tube rows, in name order, so that none can deadlock with another. put.sql and
-- delete.sql each do, but one after the other they would not (put's tubes, then delete's jobs
-- and tubes), so this statement takes every row the batch will lock first: the jobs to delete,
-- then, in one pass, the tubes of the puts and of those jobs, creating the puts' tubes that do
-- not exist yet. DO UPDATE ... WHERE false locks an existing row without writing a new version.
WITH jobs AS MATERIALIZED (
    SELECT j.id, j.tube FROM {{schema}}.jobs j
    WHERE j.id = ANY($2::bigint[])
    ORDER BY j.id
    FOR UPDATE
)
INSERT INTO {{schema}}.tubes AS t (name)
SELECT name FROM (
    SELECT unnest($1::text[]) AS name
    UNION
    SELECT j.tube FROM jobs j
) n
ORDER BY name
ON CONFLICT (name) DO UPDATE SET name = excluded.name WHERE false
