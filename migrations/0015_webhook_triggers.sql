-- Webhook triggers (issue 37): other services start a workflow by posting
-- to `/v1/hooks/{public_id}`; a delivery becomes an ordinary run, recorded
-- with the run in one transaction.
--
-- Nothing secret is stored. An HMAC secret (GitHub-style or Standard
-- Webhooks) is derived when needed from a platform key (`secret_key_id`,
-- named in the [secrets] config) with HKDF-SHA256 over a random per-row
-- salt; a bearer token is kept as its BLAKE3 hash. Rotation moves the
-- current credential (and, when asked, the public id) to the `previous_*`
-- columns, which keep verifying until `previous_until`.

CREATE TABLE webhook_triggers (
    tenant_id          uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id                 uuid NOT NULL,
    workflow_id        uuid NOT NULL,
    name               text NOT NULL CHECK (name ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
    -- The id in the ingress URL: `whk_` and 128 random bits, base64url.
    public_id          text NOT NULL CHECK (public_id ~ '^whk_[A-Za-z0-9_-]{22}$'),
    auth               text NOT NULL CHECK (auth IN ('hmac_github', 'standard_webhooks', 'bearer')),
    -- HMAC schemes: the platform key and salt the secret is derived from.
    secret_key_id      text,
    secret_salt        bytea,
    -- Bearer: BLAKE3 of the token.
    token_hash         bytea,
    -- Counts rotations; part of what the secret is derived from.
    secret_version     integer NOT NULL DEFAULT 1 CHECK (secret_version >= 1),
    previous_public_id text CHECK (previous_public_id ~ '^whk_[A-Za-z0-9_-]{22}$'),
    previous_key_id    text,
    previous_salt      bytea,
    previous_token_hash bytea,
    previous_until     timestamptz,
    -- The version its runs execute; NULL: the latest at each delivery.
    workflow_version   integer CHECK (workflow_version > 0),
    -- Parameter name -> JSON pointer (RFC 6901) into the payload.
    parameter_map      jsonb NOT NULL DEFAULT '{}',
    -- Parameter name -> value (text), the same for every delivery.
    parameters         jsonb NOT NULL DEFAULT '{}',
    -- Header name (lowercase) -> value it must equal.
    filter_headers     jsonb NOT NULL DEFAULT '{}',
    -- JSON pointer -> JSON value the payload must hold there.
    filter_payload     jsonb NOT NULL DEFAULT '{}',
    rate_per_second    integer NOT NULL DEFAULT 10 CHECK (rate_per_second BETWEEN 1 AND 1000),
    max_body_bytes     integer NOT NULL CHECK (max_body_bytes >= 1),
    -- Standard Webhooks: how far a delivery's timestamp may be from now.
    replay_window_secs integer NOT NULL DEFAULT 300 CHECK (replay_window_secs BETWEEN 1 AND 3600),
    enabled            boolean NOT NULL DEFAULT true,
    created_by         text NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    rotated_at         timestamptz,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT webhook_triggers_name UNIQUE (tenant_id, workflow_id, name),
    FOREIGN KEY (tenant_id, workflow_id) REFERENCES workflows (tenant_id, id) ON DELETE CASCADE,
    CHECK ((auth = 'bearer') = (token_hash IS NOT NULL)),
    CHECK ((auth = 'bearer') = (secret_salt IS NULL AND secret_key_id IS NULL))
);
-- Public ids are unique across tenants: the ingress finds a trigger by
-- one (current, or previous within its grace) before it knows the tenant.
CREATE UNIQUE INDEX webhook_triggers_public_id ON webhook_triggers (public_id);
CREATE UNIQUE INDEX webhook_triggers_previous_public_id ON webhook_triggers (previous_public_id)
    WHERE previous_public_id IS NOT NULL;

-- Authenticated deliveries, one row per sender's delivery id: a
-- redelivery finds its row (and run) instead of starting another.
-- Deliveries that fail authentication are never written.
CREATE TABLE webhook_deliveries (
    tenant_id        uuid NOT NULL,
    trigger_id       uuid NOT NULL,
    delivery_id      text NOT NULL CHECK (length(delivery_id) BETWEEN 1 AND 255),
    -- queued: a run was created (or had been, for a redelivery);
    -- ignored: the filter did not match; rejected: the payload did not
    -- give the workflow valid parameters.
    outcome          text NOT NULL CHECK (outcome IN ('queued', 'ignored', 'rejected')),
    run_id           uuid,
    -- Why it was ignored or rejected: problem codes and pointers, never
    -- payload values.
    detail           text,
    attempts         integer NOT NULL DEFAULT 1 CHECK (attempts >= 1),
    received_at      timestamptz NOT NULL DEFAULT now(),
    last_received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, trigger_id, delivery_id),
    CONSTRAINT webhook_deliveries_trigger FOREIGN KEY (tenant_id, trigger_id)
        REFERENCES webhook_triggers (tenant_id, id) ON DELETE CASCADE,
    CHECK ((outcome = 'queued') = (run_id IS NOT NULL))
);
CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (tenant_id, trigger_id, last_received_at DESC);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['webhook_triggers', 'webhook_deliveries']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO couler_app
                            USING (tenant_id = couler_current_tenant())
                            WITH CHECK (tenant_id = couler_current_tenant())', t);
        EXECUTE format('CREATE POLICY platform_access ON %I TO couler_platform USING (true) WITH CHECK (true)', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO couler_app, couler_platform', t);
    END LOOP;
END $$;
