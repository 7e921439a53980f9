-- policy_clear: removes the policy keyed $1. Returns the pattern, or no row if there was no such
-- policy. policy_apply.sql follows in the same transaction, and drops the rate buckets of the
-- tubes it may have governed.
DELETE FROM {{schema}}.policies WHERE pattern = $1::text RETURNING pattern
