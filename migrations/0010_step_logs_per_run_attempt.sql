-- A step's logs are kept per run attempt: a retry from failure numbers the
-- steps it runs again from 1, so their logs overwrote those of the attempt
-- that failed, which the user retried because of. Existing logs belong to
-- the run's first attempt (the best guess; earlier ones were overwritten).

ALTER TABLE step_logs ADD COLUMN run_attempt integer NOT NULL DEFAULT 1;
ALTER TABLE step_logs DROP CONSTRAINT step_logs_pkey;
ALTER TABLE step_logs ADD PRIMARY KEY (tenant_id, run_id, step, run_attempt, attempt);
