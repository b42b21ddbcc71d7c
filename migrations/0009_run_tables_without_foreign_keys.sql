-- Runs and run events are what every run creation writes: batches of runs,
-- several transactions at once. Their foreign keys cost more there than
-- they guard:
--   * each event's check locks its run's row (FOR KEY SHARE): a second
--     write and WAL record for every run created, and for every event;
--   * every run's checks lock the tenant's row and the workflow version's
--     row, the same two rows for all concurrent creates of a workflow, so
--     Postgres records the shared locks as multixacts.
-- Without them `scripts/bench-api` creates about 20% more runs per second
-- (ratio to raw INSERTs 0.55 against 0.46, mean of eleven alternated runs each).
--
-- What the keys guarded, the writers keep:
--   runs.tenant_id      row-level security's WITH CHECK pins it to the
--                       transaction's tenant, one the API authenticated;
--   runs' version       read in the transaction that inserts the run;
--                       versions are immutable and never deleted;
--   run_events.run_id   appended by the store in the transaction that
--                       creates or changes the run.
-- Tenants and runs are never deleted today (workflows only soft-deleted);
-- whatever deletes them must delete the runs and events itself, as nothing
-- cascades to these two tables any more. run_steps and step_logs keep their
-- keys to runs.

ALTER TABLE runs
    DROP CONSTRAINT runs_tenant_id_fkey,
    DROP CONSTRAINT runs_tenant_id_workflow_id_workflow_version_fkey;

ALTER TABLE run_events DROP CONSTRAINT run_events_tenant_id_run_id_fkey;
