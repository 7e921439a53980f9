-- lock_policy_tubes: the first statement of a write or reserve batch that touches tubes under a
-- unique, max-reserved or rate policy ($1): their advisory locks, to the end of the transaction,
-- in name order. The statements after it take their snapshots once the locks are held, so a
-- put sees every duplicate another gateway committed, and a reserve every reservation and token
-- counted against a cap or a rate: two gateways never exceed one. Only batches under such a
-- policy take them (the lock of a tube, not of a row, so that no other statement waits).
SELECT count(pg_advisory_xact_lock(hashtextextended('beangate.policy ' || '{{schema}}' || ' ' || name, 0)))
FROM (SELECT DISTINCT unnest($1::text[]) AS name ORDER BY 1) t
