-- What the cache index said of each step of a run when the scheduler
-- planned it (and of a later stage's steps when that stage was looked up):
-- hit, miss, pending, not_cacheable or not_needed, why, the step's key, the
-- compute time a hit saves, and, for a hit, the tenant's own run that
-- computed it (found through this table: a tenant only ever sees its own
-- runs here, whoever produced the shared entry).

CREATE TABLE run_step_cache (
    tenant_id    uuid NOT NULL,
    run_id       uuid NOT NULL,
    step         text NOT NULL,
    status       text NOT NULL
                 CHECK (status IN ('hit', 'miss', 'pending', 'not_cacheable', 'not_needed')),
    reason       text,
    cache_key    bytea CHECK (octet_length(cache_key) = 32),
    saved_ms     bigint CHECK (saved_ms >= 0),
    producer_run uuid,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, run_id, step),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE
);
-- A hit finds the tenant's run that computed its key.
CREATE INDEX run_step_cache_by_key ON run_step_cache (tenant_id, cache_key) WHERE status IN ('miss', 'pending');

ALTER TABLE run_step_cache ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON run_step_cache TO couler_app
    USING (tenant_id = couler_current_tenant()) WITH CHECK (tenant_id = couler_current_tenant());
CREATE POLICY platform_access ON run_step_cache TO couler_platform USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON run_step_cache TO couler_app, couler_platform;
