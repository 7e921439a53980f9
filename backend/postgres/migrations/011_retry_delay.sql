-- 011_retry_delay: the retry-delay policy (backend.Policy.RetryDelay, RetryDelayMax): a job of a
-- governed tube that comes back from a reservation without a delay of its own is delayed by
-- retry_delay_us × 2^(reserves − 1), at most retry_delay_max_us (0: backend.MaxRetryDelay).
-- 0 sets nothing. A column with a constant default rewrites no row.
ALTER TABLE {{schema}}.policies
    ADD COLUMN retry_delay_us bigint NOT NULL DEFAULT 0,
    ADD COLUMN retry_delay_max_us bigint NOT NULL DEFAULT 0;

-- retry_backoff_us is how long policy p delays a job that came back after its reserves-th
-- reservation, in µs (backend.Policy.RetryBackoff); 0 without retry_delay or without a policy
-- (p all NULL). Doubled step by step up to the cap, so that no count of reserves overflows.
CREATE FUNCTION {{schema}}.retry_backoff_us(p {{schema}}.policies, reserves bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    cap bigint := CASE WHEN p.retry_delay_max_us > 0 THEN p.retry_delay_max_us ELSE 4294967295000000 END;
    d bigint := coalesce(p.retry_delay_us, 0);
    n bigint := 1;
BEGIN
    WHILE n < reserves AND d > 0 AND d < cap LOOP
        d := d * 2;
        n := n + 1;
    END LOOP;
    RETURN least(d, cap);
END;
$$;
