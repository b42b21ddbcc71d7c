-- Tenant secrets, written through the API and read by the scheduler.
--
-- A secret holds only its current version: a replace overwrites the row
-- (the old value is gone, not kept encrypted), so deleting a value really
-- deletes it. Values are envelope-encrypted by couler-secrets: `ciphertext`
-- is the value sealed with a data key of its own (AES-256-GCM, `nonce`),
-- and `wrapped_dek` that data key sealed by the platform key `key_id`
-- (`dek_nonce`); both are bound to tenant, name and version. Nothing here
-- opens without the platform keys, which live only in configuration.
--
-- secret_audit records every write and delete (who, when, name, version,
-- key names), never values. Versions keep counting across a delete and a
-- re-create: the next version follows the highest the audit holds.

CREATE TABLE secrets (
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name        text NOT NULL,
    version     integer NOT NULL CHECK (version > 0),
    keys        text[] NOT NULL,
    key_id      text NOT NULL,
    dek_nonce   bytea NOT NULL,
    wrapped_dek bytea NOT NULL,
    nonce       bytea NOT NULL,
    ciphertext  bytea NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    updated_by  text NOT NULL,
    CONSTRAINT secrets_name PRIMARY KEY (tenant_id, name)
);
-- A re-wrap finds the rows still under a retired key.
CREATE INDEX secrets_by_key_id ON secrets (key_id);

CREATE TABLE secret_audit (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id        bigint GENERATED ALWAYS AS IDENTITY,
    name      text NOT NULL,
    version   integer NOT NULL CHECK (version > 0),
    action    text NOT NULL CHECK (action IN ('put', 'delete')),
    keys      text[] NOT NULL,
    actor     text NOT NULL,
    at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX secret_audit_by_name ON secret_audit (tenant_id, name, version DESC);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['secrets', 'secret_audit']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO couler_app
                            USING (tenant_id = couler_current_tenant())
                            WITH CHECK (tenant_id = couler_current_tenant())', t);
        EXECUTE format('CREATE POLICY platform_access ON %I TO couler_platform USING (true) WITH CHECK (true)', t);
    END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE, DELETE ON secrets TO couler_app, couler_platform;
-- The audit trail is append-only for the services.
GRANT SELECT, INSERT ON secret_audit TO couler_app, couler_platform;
