-- 003_gc_tubes_seqscan: the backend's connections run with enable_seqscan = off, so that the
-- generic plans of the job statements, made when the jobs table may be empty, still use its
-- indexes once it holds thousands of rows. gc_tubes is the exception: its DELETE matches on
-- reference counts, not on an index key, and the tubes heap stays a page or two (HOT updates)
-- while the name index fills with the entries of created and dropped tubes, so a sequential scan
-- is the cheap way, and a forced index scan made it slow enough to time out under tube churn.
ALTER FUNCTION {{schema}}.gc_tubes(text[]) SET enable_seqscan = on;
