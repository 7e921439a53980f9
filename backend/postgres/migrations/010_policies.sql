-- 010_policies: per-tube policies (backend.Policies), kept here so that every gateway of a
-- fleet applies the same ones in the statements that make the state changes they guard.
--
-- policies: one row per pattern, a tube name or a glob with '*'. like_pattern is the glob as a
-- LIKE pattern; glob, literals and stars give backend.MatchPolicy's order (an exact name, then
-- more literal characters, then fewer '*', then the pattern, bytewise): tube_policy picks the
-- first match. A zero limit sets nothing; expire_action 0 unset, 1 delete, 2 bury.
CREATE TABLE {{schema}}.policies (
    pattern         text PRIMARY KEY,
    like_pattern    text NOT NULL,
    glob            boolean NOT NULL,
    literals        integer NOT NULL,
    stars           integer NOT NULL,
    max_reserves    bigint NOT NULL DEFAULT 0,
    expire_after_us bigint NOT NULL DEFAULT 0,
    expire_action   smallint NOT NULL DEFAULT 0,
    max_reserved    bigint NOT NULL DEFAULT 0,
    rate            double precision NOT NULL DEFAULT 0,
    burst           bigint NOT NULL DEFAULT 0,
    uniq            boolean NOT NULL DEFAULT false
);

-- tube_policy is the policy that governs tube name (all NULL when none does). PL/pgSQL, not SQL:
-- a SQL function called from a statement is planned again at every execution of the statement
-- (~0.1 ms), a PL/pgSQL one keeps its plan for the connection. The table holds a handful of
-- rows: a scan of it is cheaper than any index would be.
CREATE FUNCTION {{schema}}.tube_policy(name text) RETURNS {{schema}}.policies
LANGUAGE plpgsql STABLE SET enable_seqscan = on AS $$
DECLARE
    found {{schema}}.policies;
BEGIN
    SELECT p.* INTO found FROM {{schema}}.policies p
    WHERE p.pattern = name OR (p.glob AND name LIKE p.like_pattern)
    ORDER BY p.glob, p.literals DESC, p.stars, p.pattern COLLATE "C"
    LIMIT 1;
    RETURN found;
END;
$$;

-- tube_rates: a rate policy's state per tube, GCRA's theoretical arrival time (a reserve may
-- take k jobs while tat + k/rate - burst/rate <= now). No row: the bucket is full.
CREATE TABLE {{schema}}.tube_rates (
    tube text PRIMARY KEY,
    tat  timestamptz NOT NULL
) WITH (fillfactor = 50);

-- body_hash: sha256 of the body of a job put into a unique tube (or there when the policy was
-- set); expires_at: when an expire-after policy acts on the job ('infinity' once it has: a job
-- expires once). Both NULL without a policy, and then in neither partial index, which are
-- exactly what the policies look up: a put's duplicate among the tube's ready and delayed jobs,
-- and the jobs whose expiry has come (a reserved job is left to its holder, and enters the
-- index again when it comes back). Adding nullable columns without a default rewrites no row.
ALTER TABLE {{schema}}.jobs ADD COLUMN body_hash bytea, ADD COLUMN expires_at timestamptz;
CREATE INDEX jobs_body_hash ON {{schema}}.jobs (tube, body_hash)
    WHERE body_hash IS NOT NULL AND state IN (1, 2);
CREATE INDEX jobs_expiry ON {{schema}}.jobs (expires_at)
    WHERE expires_at IS NOT NULL AND state <> 3;
