-- Scheduling: leases on claimed runs, the persisted plan and engine handle,
-- per-step measurements (history for resource advice) and step logs.

ALTER TABLE runs
    ADD COLUMN lease_owner      text,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN plan             jsonb,
    ADD COLUMN engine           text,
    ADD COLUMN engine_ref       text;

-- Expired leases are found without scanning finished runs.
CREATE INDEX runs_leased ON runs (lease_expires_at) WHERE status IN ('planning', 'running');

ALTER TABLE run_steps
    ADD COLUMN engine_ref text,
    ADD COLUMN wall_ms    bigint,
    ADD COLUMN cpu_ms     bigint,
    ADD COLUMN max_rss_kb bigint,
    ADD COLUMN exit_code  integer;

CREATE TABLE step_logs (
    tenant_id  uuid NOT NULL,
    run_id     uuid NOT NULL,
    step       text NOT NULL,
    attempt    integer NOT NULL,
    content    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, run_id, step, attempt),
    FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE
);

ALTER TABLE step_logs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON step_logs TO couler_app
    USING (tenant_id = couler_current_tenant()) WITH CHECK (tenant_id = couler_current_tenant());
CREATE POLICY platform_access ON step_logs TO couler_platform USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON step_logs TO couler_app, couler_platform;
