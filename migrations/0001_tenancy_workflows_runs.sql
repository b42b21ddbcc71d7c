-- Couler's core schema: tenants, principals, API keys, workflows and their
-- immutable versions, runs, run steps and run events.
--
-- Isolation is enforced twice: every tenant-owned row carries tenant_id and
-- every query filters on it, and row-level security backs that up for the
-- roles the services assume at run time:
--   couler_app       sees only the tenant named by `couler.tenant_id`
--                    (set with SET LOCAL by the store's tenant transaction);
--   couler_platform  sees every tenant (platform administration, the
--                    scheduler's queue claims, API-key authentication).
-- The migration owner is neither; the services switch role per transaction.

DO $$
BEGIN
    CREATE ROLE couler_app NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

DO $$
BEGIN
    CREATE ROLE couler_platform NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

-- The login role must be able to SET ROLE to both (a no-op for superusers).
DO $$
BEGIN
    EXECUTE format('GRANT couler_app, couler_platform TO %I', current_user);
EXCEPTION WHEN OTHERS THEN NULL;
END $$;

-- The tenant of the current transaction, or NULL when none was set.
CREATE FUNCTION couler_current_tenant() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$ SELECT nullif(current_setting('couler.tenant_id', true), '')::uuid $$;

CREATE TABLE tenants (
    id                  uuid PRIMARY KEY,
    name                text NOT NULL UNIQUE,
    display_name        text NOT NULL,
    engine              text NOT NULL DEFAULT 'local',
    share_cache         boolean NOT NULL DEFAULT true,
    max_concurrent_runs integer NOT NULL DEFAULT 10 CHECK (max_concurrent_runs > 0),
    max_queued_runs     integer NOT NULL DEFAULT 1000 CHECK (max_queued_runs > 0),
    requests_per_second integer NOT NULL DEFAULT 50 CHECK (requests_per_second > 0),
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE principals (
    tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id           uuid NOT NULL,
    subject      text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('user', 'service')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, subject)
);

CREATE TABLE api_keys (
    tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id           uuid NOT NULL,
    name         text NOT NULL,
    prefix       text NOT NULL UNIQUE,
    key_hash     bytea NOT NULL,
    roles        text[] NOT NULL,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    last_used_at timestamptz,
    revoked_at   timestamptz,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE workflows (
    tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id             uuid NOT NULL,
    name           text NOT NULL,
    description    text,
    labels         jsonb NOT NULL DEFAULT '{}',
    latest_version integer NOT NULL,
    created_by     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    deleted_at     timestamptz,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX workflows_live_name ON workflows (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX workflows_page ON workflows (tenant_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX workflows_labels ON workflows USING gin (labels jsonb_path_ops);

CREATE TABLE workflow_versions (
    tenant_id   uuid NOT NULL,
    workflow_id uuid NOT NULL,
    version     integer NOT NULL CHECK (version > 0),
    ir          jsonb NOT NULL,
    ir_hash     text NOT NULL,
    step_count  integer NOT NULL,
    created_by  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, workflow_id, version),
    FOREIGN KEY (tenant_id, workflow_id) REFERENCES workflows (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE runs (
    tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id               uuid NOT NULL,
    workflow_id      uuid,
    workflow_version integer,
    -- Runs created from inline IR carry it here instead of a version.
    inline_ir        jsonb,
    ir_hash          text NOT NULL,
    workflow_name    text NOT NULL,
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'planning', 'running', 'succeeded', 'failed', 'cancelled')),
    parameters       jsonb NOT NULL DEFAULT '{}',
    labels           jsonb NOT NULL DEFAULT '{}',
    priority         integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000),
    attempt          integer NOT NULL DEFAULT 1,
    message          text,
    idempotency_key  text,
    request_hash     text,
    trace_context    jsonb NOT NULL DEFAULT '{}',
    created_by       text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    queued_at        timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    cancel_requested_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, workflow_id, workflow_version)
        REFERENCES workflow_versions (tenant_id, workflow_id, version),
    CHECK ((workflow_id IS NOT NULL AND workflow_version IS NOT NULL AND inline_ir IS NULL)
        OR (workflow_id IS NULL AND workflow_version IS NULL AND inline_ir IS NOT NULL))
);
CREATE UNIQUE INDEX runs_idempotency ON runs (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX runs_page ON runs (tenant_id, created_at DESC, id DESC);
CREATE INDEX runs_by_workflow ON runs (tenant_id, workflow_id, created_at DESC);
CREATE INDEX runs_queued ON runs (tenant_id, priority DESC, queued_at) WHERE status = 'queued';
CREATE INDEX runs_active ON runs (tenant_id) WHERE status IN ('planning', 'running');

CREATE TABLE run_steps (
    tenant_id   uuid NOT NULL,
    run_id      uuid NOT NULL,
    name        text NOT NULL,
    status      text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'skipped', 'cached', 'cancelled')),
    attempt     integer NOT NULL DEFAULT 0,
    message     text,
    outputs     jsonb NOT NULL DEFAULT '{}',
    started_at  timestamptz,
    finished_at timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, run_id, name),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE run_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  uuid NOT NULL,
    run_id     uuid NOT NULL,
    kind       text NOT NULL,
    step       text,
    status     text,
    message    text,
    data       jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX run_events_by_run ON run_events (tenant_id, run_id, id);

-- A queued run (new, or retried) wakes the schedulers (payload: tenant id).
CREATE FUNCTION couler_notify_run_queued() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('couler_runs_queued', NEW.tenant_id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER runs_notify_queued AFTER INSERT OR UPDATE OF status ON runs
    FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION couler_notify_run_queued();

-- Every event wakes the API's event streams (payload: run id and event id).
CREATE FUNCTION couler_notify_run_event() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('couler_run_events', NEW.run_id::text || ':' || NEW.id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER run_events_notify AFTER INSERT ON run_events
    FOR EACH ROW EXECUTE FUNCTION couler_notify_run_event();

-- Row-level security on every tenant-owned table.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['principals', 'api_keys', 'workflows', 'workflow_versions', 'runs', 'run_steps', 'run_events']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO couler_app
                            USING (tenant_id = couler_current_tenant())
                            WITH CHECK (tenant_id = couler_current_tenant())', t);
        EXECUTE format('CREATE POLICY platform_access ON %I TO couler_platform USING (true) WITH CHECK (true)', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO couler_app, couler_platform', t);
    END LOOP;
END $$;

ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants TO couler_app
    USING (id = couler_current_tenant()) WITH CHECK (id = couler_current_tenant());
CREATE POLICY platform_access ON tenants TO couler_platform USING (true) WITH CHECK (true);
GRANT SELECT, UPDATE ON tenants TO couler_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON tenants TO couler_platform;
