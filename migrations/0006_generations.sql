-- Natural language → workflow generation:
-- - generations (a description and who asked) and every draft made for
--   it, the first and each one revised by user feedback, kept in order;
-- - a tenant's own step library (templates used next to the built-in
--   ones when its generations retrieve references);
-- - LLM token accounting: tokens spent per tenant and calendar month (UTC),
--   and a per-tenant monthly budget (NULL: unlimited).

ALTER TABLE tenants ADD COLUMN llm_token_budget bigint CHECK (llm_token_budget >= 0);

CREATE TABLE generations (
    tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id            uuid NOT NULL,
    description   text NOT NULL,
    -- The workflow name the user asked for, if any.
    name          text,
    current_draft integer NOT NULL DEFAULT 1 CHECK (current_draft > 0),
    created_by    text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX generations_page ON generations (tenant_id, created_at DESC, id DESC);

CREATE TABLE generation_drafts (
    tenant_id         uuid NOT NULL,
    generation_id     uuid NOT NULL,
    n                 integer NOT NULL CHECK (n > 0),
    -- The user's feedback this draft answers; none for the first.
    feedback          text,
    -- The serialized draft (IR, decomposition, explanations, warnings …).
    draft             jsonb NOT NULL,
    author            text NOT NULL CHECK (author IN ('llm', 'offline')),
    model             text,
    score             double precision,
    prompt_tokens     bigint NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens bigint NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
    created_by        text NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, generation_id, n),
    FOREIGN KEY (tenant_id, generation_id) REFERENCES generations (tenant_id, id) ON DELETE CASCADE,
    CHECK ((n = 1) = (feedback IS NULL))
);

CREATE TABLE step_library (
    tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name       text NOT NULL,
    -- A couler_nl::library::Template whose id is `name`.
    template   jsonb NOT NULL,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT step_library_name PRIMARY KEY (tenant_id, name)
);

CREATE TABLE llm_usage (
    tenant_id         uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- The first day of the calendar month (UTC).
    month             date NOT NULL CHECK (extract(day FROM month) = 1),
    prompt_tokens     bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    requests          bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, month)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['generations', 'generation_drafts', 'step_library', 'llm_usage']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO couler_app
                            USING (tenant_id = couler_current_tenant())
                            WITH CHECK (tenant_id = couler_current_tenant())', t);
        EXECUTE format('CREATE POLICY platform_access ON %I TO couler_platform USING (true) WITH CHECK (true)', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO couler_app, couler_platform', t);
    END LOOP;
END $$;
