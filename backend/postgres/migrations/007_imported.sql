-- 007_imported: the key of every job imported from another store (beangate migrate, see
-- backend.Admin.Import), written in the transaction that stores the job and kept after the job is
-- gone, so that a mover that crashed before deleting the job at its source skips it on its next
-- run instead of storing it twice.
CREATE TABLE {{schema}}.imported (
    key    text PRIMARY KEY,
    job_id bigint NOT NULL
);
