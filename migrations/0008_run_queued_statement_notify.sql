-- Inserted runs wake the schedulers once per statement and tenant instead
-- of once per row: a batch of creates ran one PL/pgSQL call per run only
-- for Postgres to fold the identical notifications. Status changes back to
-- `queued` (retries) keep the row trigger: a trigger with a transition
-- table may fire on one event only.

DROP TRIGGER runs_notify_queued ON runs;

CREATE TRIGGER runs_notify_requeued AFTER UPDATE OF status ON runs
    FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION couler_notify_run_queued();

CREATE FUNCTION couler_notify_runs_inserted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('couler_runs_queued', tenant_id::text)
    FROM (SELECT DISTINCT tenant_id FROM new_runs WHERE status = 'queued') tenants;
    RETURN NULL;
END $$;

CREATE TRIGGER runs_notify_inserted AFTER INSERT ON runs
    REFERENCING NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION couler_notify_runs_inserted();
