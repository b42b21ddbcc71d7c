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
-- The store of an entry's payload, as `store_of` names it: the scheme of
-- its first artifact's location; '' without artifacts or payload. A
-- payload is `[outputs, ...]`, outputs `[artifacts, ...]`, each artifact
-- `[digest, size, location]` under its name (see `Entry::payload`).
local function store_in(payload)
  if not payload then return '' end
  local ok, e = pcall(cmsgpack.unpack, payload)
  if not ok or type(e) ~= 'table' or type(e[1]) ~= 'table'
    or type(e[1][1]) ~= 'table' then
    return ''
  end
  local artifacts = e[1][1]
  local first
  for name in pairs(artifacts) do
    if first == nil or name < first then first = name end
  end
  if first == nil or type(artifacts[first]) ~= 'table' then return '' end
  local location = artifacts[first][3]
  if type(location) ~= 'string' then return '' end
  local at = string.find(location, '://', 1, true)
  if not at then return '' end
  return string.sub(location, 1, at + 2)
end
-- The fields of entry `k`'s copy in `store`.
local function copy_fields(store)
  return store, store .. '#size', store .. '#by', store .. '#sets'
end
-- Drops the copy of entry `k` in `store`; returns 1 if there was one.
local function drop_copy(p, k, store)
  local copies = p .. 'c:' .. k
  local size = redis.call('HGET', copies, store .. '#size')
  if not size then return 0 end
  redis.call('HDEL', copies, copy_fields(store))
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
/// name, its size under `<store>#size`, its producer under `<store>#by`,
/// the sets it would have joined under `<store>#sets`), admitted under the
/// same rule without ever evicting its own entry; it counts in the entry's
/// size, expires with it and goes with it. One copy per store: a tenant
/// whose engine cannot read the entry's store reads the copy in its own.
/// The copy joins the `copy:` twins of its producer's sets, from which
/// [`INVALIDATE`] drops it.
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
local held = redis.call('GET', entry)
if held then
  local copies = p .. 'c:' .. key
  local held_store = store_in(held)
  if store == '' or held_store == '' or held_store == store
    or redis.call('HEXISTS', copies, store) == 1 then
    return refused('exists')
  end
  if size > budget then return refused('too_big') end
  local room, refusal = make_room(key)
  if not room then return refused(refusal) end
  redis.call('HSET', copies, store, payload, store .. '#size', size,
    store .. '#by', tenant, store .. '#sets', cjson.encode(sets))
  local left = redis.call('PTTL', entry)
  if left > 0 then redis.call('PEXPIRE', copies, left) end
  redis.call('HINCRBY', p .. 'sz', key, size)
  redis.call('INCRBY', p .. 'bytes', size)
  -- Its producer's copy sets, so that it can invalidate the copy without
  -- passing for the entry's or the record's owner; the key's expiry stays
  -- the entry's.
  local copy_sets = {}
  for i, s in ipairs(sets) do copy_sets[i] = p .. 'copy:' .. string.sub(s, #p + 1) end
  join_sets(p, key, copy_sets)
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
redis.call('SET', record, ARGV[9], 'EX', ttl)
return keep('admitted')
"#
);

/// Lua shared by [`GONE`] and [`INVALIDATE`].
macro_rules! removal {
    () => {
        r#"
-- Puts entry `k`'s first copy in its place; false if it has none. The
-- entry keeps its TTL, score and counters; the copy's producer becomes the
-- entry's and joins the sets it would have joined.
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
    elseif not string.find(name, '#', 1, true) and not store then
      store = name
    end
  end
  if not store then return false end
  local got = redis.call('HMGET', copies, store, store .. '#by', store .. '#sets')
  local payload, by, sets = got[1], got[2], got[3]
  local own = math.max(0, tonumber(redis.call('HGET', p .. 'sz', k) or '0') - in_copies)
  redis.call('SET', entry, payload, 'PX', left)
  redis.call('HDEL', copies, copy_fields(store))
  redis.call('HINCRBY', p .. 'sz', k, -own)
  free_bytes(p, own)
  local producer = redis.call('HGET', p .. 'prodof', k)
  if by and producer ~= by then
    if producer and redis.call('HINCRBY', p .. 'produced', producer, -1) <= 0 then
      redis.call('HDEL', p .. 'produced', producer)
    end
    redis.call('HSET', p .. 'prodof', k, by)
    redis.call('HINCRBY', p .. 'produced', by, 1)
  end
  if sets then join_sets(p, k, cjson.decode(sets)) end
  return true
end
"#
    };
}

/// Removes entries whose artifacts are gone from their store. ARGV: `p`,
/// then each key and the store its entry was seen in. An entry that has
/// changed store since (another lookup put a copy in its place) stays;
/// otherwise its first copy takes its place, or it goes. Records stay:
/// what the steps produced is still known.
pub(super) const GONE: &str = concat!(
    common!(),
    removal!(),
    r#"
local p = ARGV[1]
local freed = 0
for i = 2, #ARGV - 1, 2 do
  local k, seen = ARGV[i], ARGV[i + 1]
  local payload = redis.call('GET', p .. 'e:' .. k)
  if not payload or store_in(payload) == seen then
    if not (payload and promote(p, k)) then
      freed = freed + (forget_entry(p, k) or 0)
    end
  end
end
free_bytes(p, freed)
return 0
"#
);

/// Invalidates what a tenant produced among the keys in two of its sets,
/// atomically (a copy promoted meanwhile is judged as what it is now).
/// ARGV: `p`, tenant, its set of keys, the set to match (the same for
/// all), then the `copy:` twins of both. A key whose entry the tenant
/// produced, or that has no entry (the tenant recorded it), goes with its
/// record and its places in every set; a key of another tenant's entry
/// only leaves the tenant's two sets. Of the keys in the copy sets, the
/// tenant's copies go and the keys leave its copy sets. Returns how many
/// entries and copies went.
pub(super) const INVALIDATE: &str = concat!(
    common!(),
    r#"
local p, tenant, mine, set, copy_mine, copy_set =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local removed, freed = 0, 0
for _, k in ipairs(redis.call('SINTER', mine, set)) do
  local producer = redis.call('HGET', p .. 'prodof', k)
  if not producer or producer == tenant then
    local size = forget_entry(p, k)
    if size then
      freed = freed + size
      removed = removed + 1
    end
    redis.call('DEL', p .. 'r:' .. k)
    leave_sets(p, k)
    redis.call('ZREM', p .. 'exp', k)
  else
    redis.call('SREM', mine, k)
    redis.call('SREM', set, k)
  end
end
free_bytes(p, freed)
for _, k in ipairs(redis.call('SINTER', copy_mine, copy_set)) do
  local fields = redis.call('HGETALL', p .. 'c:' .. k)
  for j = 1, #fields, 2 do
    if fields[j]:sub(-3) == '#by' and fields[j + 1] == tenant then
      removed = removed + drop_copy(p, k, fields[j]:sub(1, -4))
    end
  end
  redis.call('SREM', copy_mine, k)
  redis.call('SREM', copy_set, k)
end
return removed
"#
);

/// Notes that a tenant's step of a workflow reused entries, so that
/// invalidating that step removes them when the tenant produced them (from
/// another workflow). ARGV: `p`, then each key and the step's set.
pub(super) const JOIN_STEP: &str = concat!(
    common!(),
    r#"
local p = ARGV[1]
for i = 2, #ARGV - 1, 2 do
  if redis.call('EXISTS', p .. 'e:' .. ARGV[i]) == 1 then
    join_sets(p, ARGV[i], {ARGV[i + 1]})
  end
end
return 0
"#
);

/// Drops copies whose artifacts are gone. ARGV: `p`, then each key and the
/// store of its copy.
pub(super) const DROP_COPIES: &str = concat!(
    common!(),
    r#"
local p = ARGV[1]
for i = 2, #ARGV - 1, 2 do drop_copy(p, ARGV[i], ARGV[i + 1]) end
return 0
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
