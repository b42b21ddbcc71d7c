-- The network a tenant's steps get on the local engine, where a platform
-- admin set one: 'none' (a loopback of their own) or 'host' (out through
-- the machine, never to it). NULL: the platform's `local.sandbox.network`.
ALTER TABLE tenants ADD COLUMN step_network text
    CONSTRAINT tenants_step_network_check CHECK (step_network IN ('none', 'host'));

-- Only platform transactions may change it: tenant-scoped ones (couler_app,
-- what a tenant admin's requests run as) keep UPDATE on every other column.
-- A later migration adding a tenant column a tenant may change grants
-- UPDATE on it to couler_app.
DO $$
DECLARE
    columns text;
BEGIN
    SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) INTO columns
    FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'tenants' AND column_name <> 'step_network';
    REVOKE UPDATE ON tenants FROM couler_app;
    EXECUTE format('GRANT UPDATE (%s) ON tenants TO couler_app', columns);
END $$;
