-- policy_set: sets (replaces whole) the policy keyed $1. policy_apply.sql follows in the same
-- transaction, and starts the rate buckets of the tubes it may govern full.
-- $1 pattern, $2 as a LIKE pattern, $3 whether it is a glob, $4 its literal characters, $5 its
-- '*', $6 max-reserves, $7 expire-after (µs), $8 expire action (0 unset, 1 delete, 2 bury),
-- $9 max-reserved, $10 rate, $11 burst, $12 unique, $13 retry-delay (µs), $14 retry-delay-max (µs),
-- $15 history.
INSERT INTO {{schema}}.policies AS p (pattern, like_pattern, glob, literals, stars, max_reserves,
    expire_after_us, expire_action, max_reserved, rate, burst, uniq, retry_delay_us,
    retry_delay_max_us, history)
VALUES ($1::text, $2::text, $3::boolean, $4::integer, $5::integer, $6::bigint, $7::bigint,
    $8::smallint, $9::bigint, $10::float8, $11::bigint, $12::boolean, $13::bigint, $14::bigint, $15::boolean)
ON CONFLICT (pattern) DO UPDATE SET max_reserves = excluded.max_reserves,
    expire_after_us = excluded.expire_after_us, expire_action = excluded.expire_action,
    max_reserved = excluded.max_reserved, rate = excluded.rate, burst = excluded.burst,
    uniq = excluded.uniq, retry_delay_us = excluded.retry_delay_us,
    retry_delay_max_us = excluded.retry_delay_max_us, history = excluded.history
