-- 014_sql_put: put(tube, body, priority, delay, ttr), a put an application makes with SQL inside
-- its own transaction: the job exists, and waiting reserves are woken, only if that transaction
-- commits. SECURITY DEFINER, so that a role granted EXECUTE on it (and USAGE on the schema) can
-- put and do nothing else; search_path is pinned and every name below is schema-qualified.
--
-- An application's transaction may stay open long after the call, so the call takes no row lock
-- a gateway would wait for: it inserts the job (invisible, so no statement waits for its row)
-- and notes it in sql_puts. The tube and counter rows, which every gateway's write batch updates,
-- are updated by a deferred trigger at COMMIT, in the lock order of the gateways' statements
-- (tube rows by name, then the counters row), for as long as the commit takes, as a gateway's
-- batch holds them. Only a put into a unique tube holds something from the call on: the tube's
-- advisory lock, taken first as lock_policy_tubes.sql takes it, so that a duplicate is seen by
-- whichever put comes second, committed or not.

-- settings: values the gateways write and SQL reads. max_job_size: the largest body a put
-- accepts, the gateways' -z (each writes its own at start-up; beanstalkd's default until then).
CREATE TABLE {{schema}}.settings (
    name  text PRIMARY KEY,
    value bigint NOT NULL
);
INSERT INTO {{schema}}.settings (name, value) VALUES ('max_job_size', 65535);

-- sql_puts: the puts of transactions not yet committed, one row per call, removed by the
-- deferred trigger before its transaction commits (never a committed live row: unlogged).
-- woke: the job is ready, or delayed and due before every delayed job of its tube then (a
-- waiting reserve times its next try by the earliest due time it saw, see put.sql).
CREATE UNLOGGED TABLE {{schema}}.sql_puts (
    xact xid8 NOT NULL DEFAULT pg_current_xact_id(),
    tube text NOT NULL,
    woke boolean NOT NULL
);
CREATE INDEX sql_puts_xact ON {{schema}}.sql_puts (xact);

-- sql_puts_commit: at COMMIT (deferred), the transaction's puts are counted on their tube rows
-- (created if needed) and on the counters row, and announced as a gateway announces its puts
-- ('<origin> <n> <tube>'; NOTIFY is delivered only if the transaction commits). The first
-- firing in a transaction takes every row of it; the later ones find none.
CREATE FUNCTION {{schema}}.sql_puts_commit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
    names text[];
    counts bigint[];
    woken bigint[];
BEGIN
    WITH taken AS (
        DELETE FROM {{schema}}.sql_puts p WHERE p.xact = pg_current_xact_id() RETURNING p.tube, p.woke
    )
    SELECT array_agg(t.tube ORDER BY t.tube), array_agg(t.n ORDER BY t.tube), array_agg(t.w ORDER BY t.tube)
    INTO names, counts, woken
    FROM (SELECT tube, count(*) AS n, count(*) FILTER (WHERE woke) AS w FROM taken GROUP BY tube) t;
    IF names IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO {{schema}}.tubes AS t (name, jobs_count, total_jobs)
    SELECT u.name, u.n, u.n FROM unnest(names, counts) AS u(name, n) ORDER BY u.name
    ON CONFLICT (name) DO UPDATE
    SET jobs_count = t.jobs_count + excluded.jobs_count, total_jobs = t.total_jobs + excluded.total_jobs;
    UPDATE {{schema}}.counters SET total_jobs = total_jobs + (SELECT sum(n) FROM unnest(counts) AS c(n)) WHERE id = 1;
    PERFORM pg_notify({{channel}}, 'sql ' || u.w || ' ' || u.name)
    FROM unnest(names, woken) AS u(name, w) WHERE u.w > 0;
    RETURN NULL;
END;
$$;
REVOKE ALL ON FUNCTION {{schema}}.sql_puts_commit() FROM PUBLIC;

CREATE CONSTRAINT TRIGGER sql_puts_commit AFTER INSERT ON {{schema}}.sql_puts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {{schema}}.sql_puts_commit();
-- Also on a connection with session_replication_role = replica: a job must never be committed
-- without its counts.
ALTER TABLE {{schema}}.sql_puts ENABLE ALWAYS TRIGGER sql_puts_commit;

-- put: the job's id. Arguments are checked as the protocol checks a put's (tube name, priority,
-- delay and TTR within 0..2^32-1 seconds, a TTR under a second made one second, the body within
-- max_job_size), each refused with SQLSTATE 22023 (or 22004 for a NULL, 54000 for a body too
-- big) and a message naming it. The tube's policy applies as to a gateway's put: under unique, a
-- body equal to that of a ready or delayed job of the tube stores nothing and returns that job's
-- id; under expire-after the job gets its expiry. Delay and TTR are kept to the microsecond; the
-- delay counts from the call.
CREATE FUNCTION {{schema}}.put(tube text, body bytea, priority bigint DEFAULT 1024,
    delay interval DEFAULT interval '0', ttr interval DEFAULT interval '60 s') RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
    secs numeric;
    d_us bigint;
    t_us bigint;
    pol {{schema}}.policies;
    hash bytea;
    limit_bytes bigint;
    dup bigint;
    new_id bigint;
    at timestamptz := statement_timestamp();
    heads boolean := false;
BEGIN
    IF put.tube IS NULL OR put.body IS NULL OR put.priority IS NULL OR put.delay IS NULL OR put.ttr IS NULL THEN
        RAISE EXCEPTION 'beangate put: tube, body, priority, delay and ttr must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF octet_length(put.tube) NOT BETWEEN 1 AND 200 OR put.tube !~ '^[A-Za-z0-9+/;.$_()][-A-Za-z0-9+/;.$_()]*$' THEN
        RAISE EXCEPTION 'beangate put: bad tube name %', quote_literal(put.tube)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A tube name is 1 to 200 of A-Z a-z 0-9 - + / ; . $ _ ( ) and does not start with -.';
    END IF;
    IF put.priority NOT BETWEEN 0 AND 4294967295 THEN
        RAISE EXCEPTION 'beangate put: priority % is not within 0..4294967295', put.priority
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    secs := extract(epoch FROM put.delay);
    IF secs NOT BETWEEN 0 AND 4294967295 THEN
        RAISE EXCEPTION 'beangate put: delay % is not within 0..4294967295 seconds', put.delay
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    d_us := round(secs * 1000000);
    secs := extract(epoch FROM put.ttr);
    IF secs NOT BETWEEN 0 AND 4294967295 THEN
        RAISE EXCEPTION 'beangate put: ttr % is not within 0..4294967295 seconds', put.ttr
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    t_us := greatest(round(secs * 1000000), 1000000); -- as beanstalkd: a shorter TTR would time out at once
    SELECT s.value INTO limit_bytes FROM {{schema}}.settings s WHERE s.name = 'max_job_size';
    IF octet_length(put.body) > limit_bytes THEN
        RAISE EXCEPTION 'beangate put: body of % bytes is over the gateways'' max-job-size, % bytes', octet_length(put.body), limit_bytes
            USING ERRCODE = 'program_limit_exceeded';
    END IF;

    pol := {{schema}}.tube_policy(put.tube);
    IF pol.uniq THEN
        -- A duplicate committed after this transaction's snapshot would go unseen.
        IF current_setting('transaction_isolation') <> 'read committed' THEN
            RAISE EXCEPTION 'beangate put: tube % is unique, which needs a READ COMMITTED transaction (this one is %)',
                quote_literal(put.tube), upper(current_setting('transaction_isolation'))
                USING ERRCODE = 'invalid_transaction_state';
        END IF;
        -- Held to the end of the transaction: every statement from here on sees what the puts
        -- into the tube before it committed (lock_policy_tubes.sql).
        PERFORM pg_advisory_xact_lock(hashtextextended('beangate.policy ' || '{{schema}}' || ' ' || put.tube, 0));
        hash := sha256(put.body);
        SELECT j.id INTO dup FROM {{schema}}.jobs j
        WHERE j.tube = put.tube AND j.body_hash = hash AND j.state IN (1, 2) AND j.body = put.body
        ORDER BY j.id LIMIT 1;
        IF dup IS NOT NULL THEN
            RETURN dup;
        END IF;
    END IF;

    IF d_us > 0 THEN
        heads := NOT EXISTS (
            SELECT 1 FROM {{schema}}.jobs j WHERE j.tube = put.tube AND j.state = 2
              AND j.due_at <= at + d_us * interval '1 microsecond');
    END IF;
    new_id := nextval('{{schema}}.job_ids');
    -- Under a policy that keeps histories the job's starts as a gateway's put starts it (put.sql),
    -- naming the application's login role ("sql:ROLE") and its connection's address.
    INSERT INTO {{schema}}.jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, ready_at, body,
        body_hash, expires_at, history)
    VALUES (new_id, put.tube, CASE WHEN d_us > 0 THEN 2 ELSE 1 END, put.priority, d_us, t_us, at,
        CASE WHEN d_us > 0 THEN at + d_us * interval '1 microsecond' END,
        CASE WHEN d_us = 0 THEN at END, put.body, hash,
        CASE WHEN pol.expire_after_us > 0 THEN at + pol.expire_after_us * interval '1 microsecond' END,
        CASE WHEN pol.history THEN ARRAY[(extract(epoch FROM clock_timestamp()) * 1000000)::bigint
            || ' put sql:' || replace(session_user::text, ' ', '_') || ' '
            || coalesce(host(inet_client_addr()) || ':' || inet_client_port(), 'local') || ' ' || d_us || ' '] END);
    INSERT INTO {{schema}}.sql_puts (tube, woke) VALUES (put.tube, d_us = 0 OR heads);
    RETURN new_id;
END;
$$;

-- A text body is stored as its UTF-8 bytes.
CREATE FUNCTION {{schema}}.put(tube text, body text, priority bigint DEFAULT 1024,
    delay interval DEFAULT interval '0', ttr interval DEFAULT interval '60 s') RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN {{schema}}.put(tube, convert_to(body, 'UTF8'), priority, delay, ttr);
END;
$$;

-- EXECUTE is granted to nobody but the owner: an application role gets it explicitly
-- (docs/postgresql.md).
REVOKE ALL ON FUNCTION {{schema}}.put(text, bytea, bigint, interval, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION {{schema}}.put(text, text, bigint, interval, interval) FROM PUBLIC;
