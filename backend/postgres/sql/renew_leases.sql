-- renew_leases: extends the leases of gateway processes $1 to now + $2 µs (database time, so
-- every gateway judges leases by one clock).
INSERT INTO {{schema}}.processes (process, lease_until)
SELECT p, now() + $2::bigint * interval '1 microsecond' FROM unnest($1::text[]) AS p
WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
ON CONFLICT (process) DO UPDATE SET lease_until = excluded.lease_until
