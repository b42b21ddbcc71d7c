-- A tenant's default TTL for the cache entries its steps produce (a step's
-- own `cache.ttl` wins; the platform's maximum caps both).
ALTER TABLE tenants ADD COLUMN cache_ttl_secs integer CHECK (cache_ttl_secs > 0);
