-- lock_tubes: the first statement of a write batch that both puts ($1: the puts' tubes) and
-- deletes ($2: job ids). Every statement that locks several tube rows locks them in name order
-- so that none can deadlock with another; put.sql and delete.sql each do, but one after the
-- other they would not, so this statement takes every tube row the batch will update first, in
-- one pass in name order, creating the puts' tubes that do not exist yet. DO UPDATE ... WHERE
-- false locks an existing row without writing a new version of it.
INSERT INTO {{schema}}.tubes AS t (name)
SELECT name FROM (
    SELECT unnest($1::text[]) AS name
    UNION
    SELECT j.tube FROM {{schema}}.jobs j WHERE j.id = ANY($2::bigint[])
) n
ORDER BY name
ON CONFLICT (name) DO UPDATE SET name = excluded.name WHERE false
