-- The optimizer's split, tuning and resource-advice passes:
-- - a tenant's limits of one sub-workflow (each field overrides its
--   engine's default; absent fields keep it),
-- - a run's outputs (hyperparameter searches: the best trial and the
--   trial table, by tune step),
-- - a step's family (its image and command), so that resource advice can
--   learn from the same step in other workflows of the tenant.
ALTER TABLE tenants ADD COLUMN split_budget jsonb NOT NULL DEFAULT '{}'
    CHECK (jsonb_typeof(split_budget) = 'object');

ALTER TABLE runs ADD COLUMN outputs jsonb NOT NULL DEFAULT '{}';

ALTER TABLE run_steps ADD COLUMN family text;

-- History lookups: the latest measured successes of a family.
CREATE INDEX run_steps_family ON run_steps (tenant_id, family, finished_at DESC)
    WHERE status = 'succeeded' AND wall_ms IS NOT NULL;
CREATE INDEX run_steps_history ON run_steps (tenant_id, name, finished_at DESC)
    WHERE status = 'succeeded' AND wall_ms IS NOT NULL;
