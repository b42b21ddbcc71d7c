-- Schedules owned by the control plane (issue 37): a tick becomes an
-- ordinary run, on every engine, exactly once across scheduler replicas.
--
-- One transaction of a ticker claims a due schedule (FOR UPDATE SKIP
-- LOCKED), records the tick, creates the run (idempotency key
-- `sched:{workflow}:{slug}:{nominal instant, RFC 3339 UTC}`) and advances
-- next_tick/due_at; time is the database's now(). A scheduler killed at
-- any point rolls all of it back; the tick's primary key and the runs'
-- idempotency index catch any slip of the claim.
--
-- A schedule's identity is its slug within its workflow, never its row
-- id: deleting and re-creating one, or editing it, cannot fire an instant
-- twice. Ticks are kept by slug for the same reason (not cascaded from
-- the schedule row). The IR's `schedule:` is the slug `default` with
-- source `workflow`, upserted in place by each new version.

-- The smallest gap between two ticks a tenant's schedules may have.
ALTER TABLE tenants
    ADD COLUMN min_schedule_interval_secs integer NOT NULL DEFAULT 60
        CHECK (min_schedule_interval_secs >= 1);

CREATE TABLE schedules (
    tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id               uuid NOT NULL,
    workflow_id      uuid NOT NULL,
    slug             text NOT NULL CHECK (slug ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
    source           text NOT NULL CHECK (source IN ('workflow', 'api')),
    crons            text[] NOT NULL CHECK (cardinality(crons) BETWEEN 1 AND 8),
    timezone         text NOT NULL DEFAULT 'UTC',
    -- The version its runs execute; NULL: the latest at each tick.
    workflow_version integer CHECK (workflow_version > 0),
    -- Parameter values (text), with {{schedule.time}} and friends.
    parameters       jsonb NOT NULL DEFAULT '{}',
    labels           jsonb NOT NULL DEFAULT '{}',
    priority         integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000),
    catchup          text NOT NULL DEFAULT 'latest' CHECK (catchup IN ('skip', 'latest', 'all')),
    catchup_window_secs integer NOT NULL DEFAULT 3600 CHECK (catchup_window_secs BETWEEN 1 AND 604800),
    max_catchup      integer NOT NULL DEFAULT 10 CHECK (max_catchup BETWEEN 1 AND 1000),
    overlap          text NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'allow', 'cancel_other')),
    jitter_secs      integer NOT NULL DEFAULT 0 CHECK (jitter_secs >= 0),
    start_at         timestamptz,
    end_at           timestamptz,
    paused_at        timestamptz,
    paused_by        text,
    paused_reason    text,
    -- The nominal instant of the last tick handled (fired or skipped).
    last_tick        timestamptz,
    -- The first nominal instant not handled yet; NULL once it ended.
    next_tick        timestamptz,
    -- next_tick plus its deterministic jitter: what tickers claim on.
    due_at           timestamptz,
    -- Bumped by every edit of what decides the ticks.
    generation       bigint NOT NULL DEFAULT 1,
    created_by       text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT schedules_slug UNIQUE (tenant_id, workflow_id, slug),
    FOREIGN KEY (tenant_id, workflow_id) REFERENCES workflows (tenant_id, id) ON DELETE CASCADE,
    CHECK (end_at IS NULL OR start_at IS NULL OR end_at > start_at)
);
CREATE INDEX schedules_due ON schedules (due_at) WHERE paused_at IS NULL AND due_at IS NOT NULL;

CREATE TABLE schedule_ticks (
    tenant_id   uuid NOT NULL,
    workflow_id uuid NOT NULL,
    slug        text NOT NULL,
    nominal_at  timestamptz NOT NULL,
    schedule_id uuid NOT NULL,
    -- `catchup`: fired later than its instant (after downtime).
    kind        text NOT NULL CHECK (kind IN ('scheduled', 'catchup')),
    outcome     text NOT NULL
                CHECK (outcome IN ('fired', 'skipped_overlap', 'skipped_missed', 'rejected_quota', 'failed')),
    run_id      uuid,
    detail      text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, workflow_id, slug, nominal_at),
    FOREIGN KEY (tenant_id, workflow_id) REFERENCES workflows (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE backfills (
    tenant_id       uuid NOT NULL,
    id              uuid NOT NULL,
    schedule_id     uuid NOT NULL,
    from_at         timestamptz NOT NULL,
    to_at           timestamptz NOT NULL,
    reprocess       text NOT NULL CHECK (reprocess IN ('missing', 'failed', 'all')),
    max_active_runs integer NOT NULL DEFAULT 1 CHECK (max_active_runs BETWEEN 1 AND 100),
    state           text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'cancelled')),
    created_by      text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, schedule_id) REFERENCES schedules (tenant_id, id) ON DELETE CASCADE,
    CHECK (to_at > from_at)
);
CREATE INDEX backfills_running ON backfills (created_at) WHERE state = 'running';

-- One item per nominal instant: a retried release cannot create it twice.
CREATE TABLE backfill_items (
    tenant_id   uuid NOT NULL,
    backfill_id uuid NOT NULL,
    nominal_at  timestamptz NOT NULL,
    run_id      uuid,
    released_at timestamptz,
    PRIMARY KEY (tenant_id, backfill_id, nominal_at),
    FOREIGN KEY (tenant_id, backfill_id) REFERENCES backfills (tenant_id, id) ON DELETE CASCADE
);

-- What started a run: the API, a schedule's tick (trigger_id: the
-- schedule, scheduled_for: the tick's nominal instant), a backfill
-- (trigger_id: the backfill) or a webhook trigger.
ALTER TABLE runs
    ADD COLUMN trigger_kind  text NOT NULL DEFAULT 'api'
        CHECK (trigger_kind IN ('api', 'schedule', 'backfill', 'webhook')),
    ADD COLUMN trigger_id    uuid,
    ADD COLUMN scheduled_for timestamptz;
-- A schedule's overlap policy looks up its active runs.
CREATE INDEX runs_active_by_trigger ON runs (tenant_id, trigger_id)
    WHERE trigger_id IS NOT NULL AND status IN ('queued', 'planning', 'running');
-- A backfill looks up the runs a schedule already made for an instant.
CREATE INDEX runs_by_scheduled_for ON runs (tenant_id, workflow_id, scheduled_for)
    WHERE scheduled_for IS NOT NULL;

-- A schedule created, edited, paused or resumed wakes the tickers, which
-- otherwise sleep until the earliest due_at.
CREATE FUNCTION couler_notify_schedules_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('couler_schedules_changed', '');
    RETURN NULL;
END $$;
CREATE TRIGGER schedules_notify AFTER INSERT OR UPDATE OF due_at, paused_at ON schedules
    FOR EACH STATEMENT EXECUTE FUNCTION couler_notify_schedules_changed();
CREATE TRIGGER backfills_notify AFTER INSERT ON backfills
    FOR EACH STATEMENT EXECUTE FUNCTION couler_notify_schedules_changed();

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['schedules', 'schedule_ticks', 'backfills', 'backfill_items']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO couler_app
                            USING (tenant_id = couler_current_tenant())
                            WITH CHECK (tenant_id = couler_current_tenant())', t);
        EXECUTE format('CREATE POLICY platform_access ON %I TO couler_platform USING (true) WITH CHECK (true)', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO couler_app, couler_platform', t);
    END LOOP;
END $$;
