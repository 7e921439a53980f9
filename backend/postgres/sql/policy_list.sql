-- policy_list: every policy, or only the one keyed $1 (NULL: all).
SELECT pattern, max_reserves, expire_after_us, expire_action, max_reserved, rate, burst, uniq,
    retry_delay_us, retry_delay_max_us, history
FROM {{schema}}.policies
WHERE $1::text IS NULL OR pattern = $1::text
ORDER BY pattern COLLATE "C"
