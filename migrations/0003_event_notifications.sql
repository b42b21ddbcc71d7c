-- One NOTIFY per statement and run instead of one per event row: NOTIFY
-- takes a database-wide lock until commit, so every extra notification
-- serializes commits. Listeners read the events from the table anyway, so
-- the payload is just the run id. A run's first event (`run.queued`) wakes
-- no stream: none can be open before the run exists.

DROP TRIGGER run_events_notify ON run_events;
DROP FUNCTION couler_notify_run_event();

CREATE FUNCTION couler_notify_run_events() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('couler_run_events', run_id::text)
    FROM (SELECT DISTINCT run_id FROM new_events WHERE kind <> 'run.queued') runs;
    RETURN NULL;
END $$;

CREATE TRIGGER run_events_notify AFTER INSERT ON run_events
    REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION couler_notify_run_events();
