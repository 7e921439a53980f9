-- policy_clear: removes the policy keyed $1; the rate buckets of the tubes it may have governed
-- are dropped. Returns the pattern, or no row if there was no such policy. policy_apply.sql
-- follows in the same transaction.
WITH cleared AS (
    DELETE FROM {{schema}}.policies WHERE pattern = $1::text RETURNING pattern, glob, like_pattern
), refilled AS (
    DELETE FROM {{schema}}.tube_rates r
    WHERE EXISTS (SELECT 1 FROM cleared c WHERE r.tube = c.pattern OR (c.glob AND r.tube LIKE c.like_pattern))
)
SELECT pattern FROM cleared
