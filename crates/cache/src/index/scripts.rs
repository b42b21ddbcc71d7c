//! The index's Lua scripts: each runs atomically in Redis, so scores, sizes
//! and the byte total stay consistent under concurrent schedulers.

/// Admits a newcomer under the budget (Couler Algorithm 2). KEYS: entry,
/// z, sz, bytes, famof, record. ARGV: key, size, score, budget, ttl,
/// payload, prefix, family, record payload, then the invalidation sets to
/// join. Whatever the outcome, a record is kept: the newcomer's when it is
/// admitted or none was there. The sets are joined when either is the
/// newcomer's, so its producer can invalidate a record its entry did not
/// outlive (see [`super::CacheIndex::invalidate`]).
/// Victims are chosen lowest score first; if any would score at least the
/// newcomer, nothing is evicted and the newcomer is rejected.
pub(super) const ADMIT: &str = r#"
local entry, z, sz, bytes, famof = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local key, size, score, budget, ttl, payload, prefix =
  ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7]
local recorded = redis.call('SET', KEYS[6], ARGV[9], 'NX', 'EX', ttl) ~= false
local function refused(outcome)
  if recorded then
    for i = 10, #ARGV do redis.call('SADD', ARGV[i], key) end
  end
  return outcome
end
if redis.call('EXISTS', entry) == 1 then return refused('exists') end
if size > budget then return refused('too_big') end
local total = tonumber(redis.call('GET', bytes) or '0')
local victims, freed, offset = {}, 0, 0
while total - freed + size > budget do
  local lowest = redis.call('ZRANGE', z, offset, offset, 'WITHSCORES')
  if #lowest == 0 then return refused('too_big') end
  local k = lowest[1]
  local alive = redis.call('EXISTS', prefix .. ':cache:e:' .. k) == 1
  if alive and tonumber(lowest[2]) >= score then return refused('rejected') end
  victims[#victims + 1] = k
  freed = freed + tonumber(redis.call('HGET', sz, k) or '0')
  offset = offset + 1
end
for _, k in ipairs(victims) do
  redis.call('DEL', prefix .. ':cache:e:' .. k, prefix .. ':cache:hits:' .. k)
  redis.call('ZREM', z, k)
  redis.call('HDEL', sz, k)
  redis.call('HDEL', famof, k)
end
if freed > 0 then redis.call('DECRBY', bytes, freed) end
redis.call('SET', entry, payload, 'EX', ttl)
redis.call('ZADD', z, score, key)
redis.call('HSET', sz, key, size)
redis.call('INCRBY', bytes, size)
redis.call('HSET', famof, key, ARGV[8])
redis.call('SET', KEYS[6], ARGV[9], 'EX', ttl)
for i = 10, #ARGV do redis.call('SADD', ARGV[i], key) end
return 'admitted'
"#;

/// Removes entries, and their records when ARGV[2] is `1`. KEYS: z, sz,
/// bytes, famof. ARGV: prefix, records flag, keys…
pub(super) const REMOVE: &str = r#"
local z, sz, bytes, famof, prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1]
local removed, freed = 0, 0
for i = 3, #ARGV do
  local k = ARGV[i]
  local size = redis.call('HGET', sz, k)
  if size then
    freed = freed + tonumber(size)
    redis.call('HDEL', sz, k)
    removed = removed + 1
  end
  redis.call('ZREM', z, k)
  redis.call('HDEL', famof, k)
  redis.call('DEL', prefix .. ':cache:e:' .. k, prefix .. ':cache:hits:' .. k)
  if ARGV[2] == '1' then redis.call('DEL', prefix .. ':cache:r:' .. k) end
end
if freed > 0 then redis.call('DECRBY', bytes, freed) end
return removed
"#;

/// Records reuse events of step families, atomically, and returns each
/// family's decayed counts after its event (as `ReuseStats::decayed` and
/// `record_*` compute them). KEYS: family hashes (repeats allowed), then
/// one seen mark per `computed` event, in order. ARGV: now (hours),
/// half-life (hours), expiry (seconds), seen mark TTL (seconds), then one
/// event per family: `reused`, or `computed` (an output produced, unless
/// its key was computed before: a reuse the cache missed).
pub(super) const FAMILY: &str = r#"
local now, half_life, expiry, seen_ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local families = #ARGV - 4
local marks = families
local out = {}
for i = 1, families do
  local k, new_output = KEYS[i], false
  if ARGV[4 + i] == 'computed' then
    marks = marks + 1
    new_output = redis.call('SET', KEYS[marks], 1, 'NX', 'EX', seen_ttl) ~= false
  end
  local s = redis.call('HMGET', k, 'produced', 'reused', 'at')
  local produced, reused, at = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or now
  if half_life > 0 and now > at then
    local keep = 2 ^ (-(now - at) / half_life)
    produced, reused = produced * keep, reused * keep
  end
  if new_output then produced = produced + 1 else reused = reused + 1 end
  at = math.max(now, at)
  redis.call('HSET', k, 'produced', tostring(produced), 'reused', tostring(reused), 'at', tostring(at))
  redis.call('EXPIRE', k, expiry)
  out[i] = {tostring(produced), tostring(reused), tostring(at)}
end
return out
"#;
