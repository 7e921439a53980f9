-- tick_next: the last statement of a policy tick (policies.go): the next moment a tick has
-- something to do, as far as the store shows now: the first expiry due, and the first deadline
-- of a reservation in a tube governed by max-reserves, expire-after or retry-delay. NULL: none.
-- No parameters.
SELECT least(
    (SELECT min(j.expires_at) FROM {{schema}}.jobs j
     WHERE j.expires_at IS NOT NULL AND j.state <> 3 AND j.expires_at < 'infinity'),
    (SELECT min(d.at) FROM {{schema}}.tubes t
     CROSS JOIN LATERAL {{schema}}.tube_policy(t.name) p
     CROSS JOIN LATERAL (SELECT min(j.due_at) AS at FROM {{schema}}.jobs j
                         WHERE j.tube = t.name AND j.state = 3) d
     WHERE p.max_reserves > 0 OR p.expire_after_us > 0 OR p.retry_delay_us > 0))
