-- A tenant's allowed-image policy for generated workflows: image patterns
-- (`*` globs, or a prefix without `*`) its generated steps may use, on top
-- of the platform's `[generate] allowed_images`; an image must match both.
-- Empty: no limit beyond the platform's.
ALTER TABLE tenants ADD COLUMN allowed_images text[] NOT NULL DEFAULT '{}';
