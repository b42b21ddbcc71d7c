//! The index's Lua scripts: each runs atomically in Redis, so scores, sizes,
//! the byte total and the producers' counts stay consistent under
//! concurrent schedulers.
//!
//! Every key a computed step wrote is due in `P:cache:exp` when its record
//! expires (an admitted entry expires with its record). Reclaiming a due
//! key frees what Redis's own expiry left behind: an expired entry's bytes,
//! score and counters, and, once the record is gone too, the key's places
//! in the invalidation sets (`P:cache:setsof` lists them). Admission
//! reclaims before it weighs the budget, so expired bytes never crowd out
//! a newcomer, and [`SWEEP`] drains what is left. A byte total deleted
//! behind the index's back is counted again from the sizes it holds.

/// Lua shared by the scripts. `p` is `<prefix>:cache:`.
macro_rules! common {
    () => {
        r#"
-- The byte total, counted again from the sizes if it went missing.
local function held_bytes(p)
  local total = redis.call('GET', p .. 'bytes')
  if total then return tonumber(total) end
  local sum = 0
  for _, v in ipairs(redis.call('HVALS', p .. 'sz')) do sum = sum + tonumber(v) end
  redis.call('SET', p .. 'bytes', sum)
  return sum
end
-- Takes `n` bytes, whose sizes are already dropped, off the total (a
-- missing total is counted again without them).
local function free_bytes(p, n)
  if redis.call('EXISTS', p .. 'bytes') == 0 then
    held_bytes(p)
  elseif n > 0 then
    redis.call('DECRBY', p .. 'bytes', n)
  end
end
-- Drops an entry's bookkeeping and its copies; returns its size (copies
-- included), or nil if none was held.
local function forget_entry(p, k)
  local size = redis.call('HGET', p .. 'sz', k)
  redis.call('DEL', p .. 'e:' .. k, p .. 'hits:' .. k, p .. 'c:' .. k)
  redis.call('ZREM', p .. 'z', k)
  redis.call('HDEL', p .. 'sz', k)
  redis.call('HDEL', p .. 'famof', k)
  redis.call('HDEL', p .. 'storeof', k)
  local producer = redis.call('HGET', p .. 'prodof', k)
  if producer then
    redis.call('HDEL', p .. 'prodof', k)
    if redis.call('HINCRBY', p .. 'produced', producer, -1) <= 0 then
      redis.call('HDEL', p .. 'produced', producer)
    end
  end
  if size then return tonumber(size) end
  return nil
end
-- Takes a key out of every invalidation set it joined.
local function leave_sets(p, k)
  local sets = redis.call('HGET', p .. 'setsof', k)
  if sets then
    for _, s in ipairs(cjson.decode(sets)) do redis.call('SREM', s, k) end
    redis.call('HDEL', p .. 'setsof', k)
  end
end
-- Puts a key in the sets `names` and notes them in setsof.
local function join_sets(p, k, names)
  local known, list = {}, {}
  local sets = redis.call('HGET', p .. 'setsof', k)
  if sets then list = cjson.decode(sets) end
  for _, s in ipairs(list) do known[s] = true end
  for _, s in ipairs(names) do
    redis.call('SADD', s, k)
    if not known[s] then list[#list + 1] = s; known[s] = true end
  end
  redis.call('HSET', p .. 'setsof', k, cjson.encode(list))
end
-- Reclaims up to `limit` due keys at `now` (Unix seconds); returns how many.
local function reclaim(p, now, limit)
  local due = redis.call('ZRANGEBYSCORE', p .. 'exp', '-inf', now, 'LIMIT', 0, limit)
  local freed = 0
  for _, k in ipairs(due) do
    local entry_left = redis.call('PTTL', p .. 'e:' .. k)
    if entry_left == -2 then freed = freed + (forget_entry(p, k) or 0) end
    local left = math.max(entry_left, redis.call('PTTL', p .. 'r:' .. k))
    if left == -2 then
      leave_sets(p, k)
      redis.call('ZREM', p .. 'exp', k)
    elseif left == -1 then
      -- No expiry: set outside the index; it is no longer due.
      redis.call('ZREM', p .. 'exp', k)
    else
      redis.call('ZADD', p .. 'exp', now + math.ceil(left / 1000), k)
    end
  end
  free_bytes(p, freed)
  return #due
end
local function unix_now() return tonumber(redis.call('TIME')[1]) end
-- Drops the copy of entry `k` in `store`; returns 1 if there was one.
local function drop_copy(p, k, store)
  local copies = p .. 'c:' .. k
  local size = redis.call('HGET', copies, store .. '#size')
  if not size then return 0 end
  redis.call('HDEL', copies, store, store .. '#size', store .. '#by')
  if redis.call('HEXISTS', p .. 'sz', k) == 1 then
    redis.call('HINCRBY', p .. 'sz', k, -tonumber(size))
    free_bytes(p, tonumber(size))
  end
  return 1
end
"#
    };
}

/// How many due keys one admission reclaims at most.
pub(super) const RECLAIM_PER_ADMISSION: u32 = 64;

/// Admits a newcomer under the budget (Couler Algorithm 2). KEYS: entry,
/// record. ARGV: `p`, key, size, score, budget, ttl, payload, family,
/// record payload, tenant, reclaim limit, the newcomer's store (the scheme
/// of its artifacts' locations, `s3://`; empty without artifacts), then
/// the invalidation sets to join. First reclaims due keys. Whatever the
/// outcome, a record is kept: the newcomer's when it is admitted or none
/// was there. The sets are joined when either is the newcomer's, so its
/// producer can invalidate a record its entry did not outlive (see
/// [`super::CacheIndex::invalidate`]).
/// Victims are chosen lowest score first; if any would score at least the
/// newcomer, nothing is evicted and the newcomer is rejected.
///
/// A newcomer whose key is held by an entry in another store becomes a
/// copy of that entry (`P:cache:c:<key>`: the payload under the store's
/// name, its size under `<store>#size`, its producer under `<store>#by`),
/// admitted under the same rule without ever evicting its own entry; it
/// counts in the entry's size, expires with it and goes with it. One copy
/// per store: a tenant whose engine cannot read the entry's store reads
/// the copy in its own.
pub(super) const ADMIT: &str = concat!(
    common!(),
    r#"
local entry, record = KEYS[1], KEYS[2]
local p, key, size, score, budget, ttl, payload, family, tenant, store =
  ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]),
  tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[10], ARGV[12]
local now = unix_now()
reclaim(p, now, tonumber(ARGV[11]))
local sets = {}
for i = 13, #ARGV do sets[#sets + 1] = ARGV[i] end
local function keep(outcome)
  redis.call('ZADD', p .. 'exp', now + ttl, key)
  join_sets(p, key, sets)
  return outcome
end
local recorded = redis.call('SET', record, ARGV[9], 'NX', 'EX', ttl) ~= false
local function refused(outcome)
  if recorded then return keep(outcome) end
  return outcome
end
-- Entries to evict, lowest score first, until `size` more bytes fit, and
-- the bytes they free; nil and the refusal if one that is alive scores at
-- least the newcomer. The entry `spared` is never a victim.
local function make_room(spared)
  local total = held_bytes(p)
  local victims, freed, offset = {}, 0, 0
  while total - freed + size > budget do
    local lowest = redis.call('ZRANGE', p .. 'z', offset, offset, 'WITHSCORES')
    if #lowest == 0 then return nil, 'too_big' end
    local k = lowest[1]
    offset = offset + 1
    if k ~= spared then
      local alive = redis.call('EXISTS', p .. 'e:' .. k) == 1
      if alive and tonumber(lowest[2]) >= score then return nil, 'rejected' end
      victims[#victims + 1] = k
      freed = freed + tonumber(redis.call('HGET', p .. 'sz', k) or '0')
    end
  end
  for _, k in ipairs(victims) do forget_entry(p, k) end
  free_bytes(p, freed)
  return victims
end
if redis.call('EXISTS', entry) == 1 then
  local copies = p .. 'c:' .. key
  local held = redis.call('HGET', p .. 'storeof', key)
  if store == '' or not held or held == store
    or redis.call('HEXISTS', copies, store) == 1 then
    return refused('exists')
  end
  if size > budget then return refused('too_big') end
  local room, refusal = make_room(key)
  if not room then return refused(refusal) end
  redis.call('HSET', copies, store, payload, store .. '#size', size, store .. '#by', tenant)
  local left = redis.call('PTTL', entry)
  if left > 0 then redis.call('PEXPIRE', copies, left) end
  redis.call('HINCRBY', p .. 'sz', key, size)
  redis.call('INCRBY', p .. 'bytes', size)
  -- Its producer's sets, so that it can invalidate the copy; the key's
  -- expiry stays the entry's.
  join_sets(p, key, sets)
  return 'copied'
end
if size > budget then return refused('too_big') end
-- Bookkeeping of this key's expired entry, if reclaiming missed it.
local stale = forget_entry(p, key)
free_bytes(p, stale or 0)
local room, refusal = make_room(nil)
if not room then return refused(refusal) end
redis.call('SET', entry, payload, 'EX', ttl)
redis.call('ZADD', p .. 'z', score, key)
redis.call('HSET', p .. 'sz', key, size)
redis.call('INCRBY', p .. 'bytes', size)
redis.call('HSET', p .. 'famof', key, family)
redis.call('HSET', p .. 'prodof', key, tenant)
redis.call('HINCRBY', p .. 'produced', tenant, 1)
if store ~= '' then redis.call('HSET', p .. 'storeof', key, store) end
redis.call('SET', record, ARGV[9], 'EX', ttl)
return keep('admitted')
"#
);

/// Removes entries. ARGV: `p`, why, keys…; returns how many entries went.
/// Why is `gone` (their artifacts are gone from their store: a copy, if
/// the entry has one, takes its place, and records stay) or `invalidated`
/// (records and the keys' places in the invalidation sets go too).
pub(super) const REMOVE: &str = concat!(
    common!(),
    r#"
-- Puts entry `k`'s first copy in its place; false if it has none. The
-- entry keeps its TTL, score and counters; the copy's producer becomes the
-- entry's.
local function promote(p, k)
  local entry, copies = p .. 'e:' .. k, p .. 'c:' .. k
  local left = redis.call('PTTL', entry)
  if left <= 0 then return false end
  local fields = redis.call('HGETALL', copies)
  local store, in_copies = nil, 0
  for j = 1, #fields, 2 do
    local name = fields[j]
    if name:sub(-5) == '#size' then
      in_copies = in_copies + tonumber(fields[j + 1])
    elseif name:sub(-3) ~= '#by' and not store then
      store = name
    end
  end
  if not store then return false end
  local got = redis.call('HMGET', copies, store, store .. '#by')
  local payload, by = got[1], got[2]
  local own = tonumber(redis.call('HGET', p .. 'sz', k) or '0') - in_copies
  redis.call('SET', entry, payload, 'PX', left)
  redis.call('HDEL', copies, store, store .. '#size', store .. '#by')
  redis.call('HINCRBY', p .. 'sz', k, -own)
  free_bytes(p, own)
  redis.call('HSET', p .. 'storeof', k, store)
  local producer = redis.call('HGET', p .. 'prodof', k)
  if producer ~= by then
    if producer and redis.call('HINCRBY', p .. 'produced', producer, -1) <= 0 then
      redis.call('HDEL', p .. 'produced', producer)
    end
    redis.call('HSET', p .. 'prodof', k, by)
    redis.call('HINCRBY', p .. 'produced', by, 1)
  end
  return true
end
local p, invalidated = ARGV[1], ARGV[2] == 'invalidated'
local removed, freed = 0, 0
for i = 3, #ARGV do
  local k = ARGV[i]
  if invalidated or not promote(p, k) then
    local size = forget_entry(p, k)
    if size then
      freed = freed + size
      removed = removed + 1
    end
  end
  if invalidated then
    redis.call('DEL', p .. 'r:' .. k)
    leave_sets(p, k)
    redis.call('ZREM', p .. 'exp', k)
  end
end
free_bytes(p, freed)
return removed
"#
);

/// Drops copies (see [`ADMIT`]). ARGV: `p`, `store` or `by`, a store or a
/// tenant, then keys: of each, the copy in that store, or every copy that
/// tenant produced. Returns how many were dropped.
pub(super) const DROP_COPIES: &str = concat!(
    common!(),
    r#"
local p, by, which = ARGV[1], ARGV[2] == 'by', ARGV[3]
local dropped = 0
for i = 4, #ARGV do
  local k = ARGV[i]
  if by then
    local fields = redis.call('HGETALL', p .. 'c:' .. k)
    for j = 1, #fields, 2 do
      local name = fields[j]
      if name:sub(-3) == '#by' and fields[j + 1] == which then
        dropped = dropped + drop_copy(p, k, name:sub(1, -4))
      end
    end
  else
    dropped = dropped + drop_copy(p, k, which)
  end
end
return dropped
"#
);

/// Reclaims up to ARGV[2] due keys; ARGV[1] is `p`. Returns how many.
pub(super) const SWEEP: &str = concat!(
    common!(),
    r#"
return reclaim(ARGV[1], unix_now(), tonumber(ARGV[2]))
"#
);

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
