package fleet

import "github.com/redis/go-redis/v9"

// gcra is the Limiter's bucket, a generic cell rate algorithm over one key
// holding the bucket's theoretical arrival time (TAT), in seconds on Redis's
// clock. Unlike redis_rate's script (which it follows), it can reserve: a
// call that accepts a wait takes its place in the queue at once, so a large
// cost is not starved by smaller ones that keep arriving first; it can take
// tokens into debt (ARGV[4] = -1 waives the wait limit); and it can give
// tokens back (a negative count) without the bucket ever holding more than
// its burst.
//
// It also keeps a return (KEYS[2]): when Redis answers again after an
// outage, the replicas of a fleet come back over up to a second, and those
// not yet back spend their fallback shares unseen. The first replica back
// opens the return with the share of the fleet not yet seen (1 less its
// own); each replica that calls while it is open, back from the outage or
// never gone, is counted once (it passes the return it was last counted
// in) and takes its share off; until the shares seen add up to the whole,
// or the return expires, every call charges the bucket the shares not yet
// seen for the time since the last call, as if those replicas spent them
// in full.
//
// KEYS[1]: the bucket; KEYS[2]: the return. ARGV: seconds per token, burst,
// tokens, the longest wait accepted in seconds (-1: any), the caller's
// fallback share, the return it was last counted in ("" for none), 1 when
// the caller comes back from deciding locally, how long a return lasts at
// most in milliseconds. Returns {admitted, wait in seconds, how far the TAT
// is ahead of now afterwards in seconds, the open return or ""}: the bucket
// holds burst less that many seconds' tokens, and promised waits beyond
// empty.
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = (tonumber(t[1]) - 1700000000) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local share = tonumber(ARGV[5])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local ret = redis.call('HMGET', KEYS[2], 'id', 'unseen', 'at')
local id = ''
if ret[1] then
  id = ret[1]
  local unseen, at = tonumber(ret[2]), tonumber(ret[3])
  if now > at then tat = tat + unseen * (now - at) end
  if ARGV[6] ~= id then unseen = unseen - share end
  if unseen < 0.0001 then
    redis.call('DEL', KEYS[2])
    id = ''
  else
    redis.call('HSET', KEYS[2], 'unseen', string.format('%.6f', unseen), 'at', string.format('%.6f', now))
  end
elseif ARGV[7] == '1' and share < 1 then
  id = string.format('%.6f', now)
  redis.call('HSET', KEYS[2], 'id', id, 'unseen', string.format('%.6f', 1 - share), 'at', id)
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[8]))
end
local admitted = 1
local new_tat = tat + n * interval
local wait = new_tat - burst * interval - now
if wait < 0 then wait = 0 end
if n > 0 and max_wait >= 0 and wait > max_wait then
  admitted = 0
  new_tat = tat
end
if new_tat > now then
  redis.call('SET', KEYS[1], string.format('%.6f', new_tat), 'PX', math.ceil((new_tat - now) * 1000) + 1000)
else
  redis.call('DEL', KEYS[1])
end
local ahead = new_tat - now
if ahead < 0 then ahead = 0 end
return {admitted, string.format('%.6f', wait), string.format('%.6f', ahead), id}
`)

// lawScript adds one process's answers to the fleet's and returns the law
// of package budget over the fleet's window, as the vectors of
// budget/testdata/law.json specify it. The counts live in one hash
// (KEYS[1]), a field per kind and time slot ("r.<slot>": requests
// answered, "a.<slot>": those accepted, "f.<slot>": first attempts among
// them); fields older than the window are deleted as they are met. The
// processes that exchanged within the window are a sorted set (KEYS[2])
// scored by the time they last did.
//
// ARGV: requests, accepts, first attempts, the process's id, the slot in
// milliseconds, the slots in a window, K, Ratio, Floor, the time in
// milliseconds ("" for Redis's clock; the vectors set it), and Padding. Returns, as
// strings, {the attempts' throttle probability, the fleet's retries
// a second, its first attempts over the window, processes}.
var lawScript = redis.NewScript(`
local ms
if ARGV[10] == '' then
  local t = redis.call('TIME')
  ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  ms = tonumber(ARGV[10])
end
local slot_ms = tonumber(ARGV[5])
local slots = tonumber(ARGV[6])
local slot = math.floor(ms / slot_ms)
local add = {r = tonumber(ARGV[1]), a = tonumber(ARGV[2]), f = tonumber(ARGV[3])}
for kind, n in pairs(add) do
  if n ~= 0 then redis.call('HINCRBY', KEYS[1], kind .. '.' .. slot, n) end
end
local sums = {r = 0, a = 0, f = 0}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local kind, s = string.match(all[i], '^(%a+)%.(%d+)$')
  s = tonumber(s)
  if s == nil or sums[kind] == nil or s <= slot - slots then
    redis.call('HDEL', KEYS[1], all[i])
  else
    sums[kind] = sums[kind] + tonumber(all[i + 1])
  end
end
local window = slot_ms * slots
redis.call('PEXPIRE', KEYS[1], 2 * window)
redis.call('ZADD', KEYS[2], ms, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms - window)
redis.call('PEXPIRE', KEYS[2], 2 * window)
local k, ratio, floor, pad = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[11])
local p = (sums.r - k * sums.a - pad) / (sums.r + pad)
if p < 0 then p = 0 end
local rate = ratio * sums.f / (window / 1000) + floor
return {string.format('%.17g', p), string.format('%.17g', rate), tostring(sums.f), tostring(redis.call('ZCARD', KEYS[2]))}
`)

// headers is a Limiter's count of the fleet's calls against what the
// provider's rate-limit headers say, kept in one hash (KEYS[1]) for every
// process, with times in milliseconds on Redis's clock. It is the
// algorithm of the root module's internal/pace, specified by the vectors
// of llmhttp/testdata/pace, which it passes (TestHeadersScriptVectors).
// For the requests (fields "r.*") and the tokens ("t.*"), each on its own,
// it holds the answer it counts from (rem: what was left, limit, reset,
// at: when it was received), the calls sent since (sent) and, before any
// answer or once the reset has passed, the calls sent into a window no
// answer has counted yet (after).
//
// An answer is taken when it is the first, or newer than the one held and
// either received after its reset, or saying no more is left than the
// count kept since plus the whole units a limit that refills as it goes
// may have refilled: an older or stale answer changes nothing, a lower one
// (others' use of the key) is taken. The calls sent before a taken answer
// that it does not count yet (on their way) are carried over. A call has
// room before the reset when rem less sent leaves its cost; after it, when
// the limit less after does. A call with room in both is counted, each by
// its own limit's reset.
//
// ARGV, for the requests then the tokens, six each: known (1 or 0: the
// answer says this limit and its reset), remaining, limit (0 unknown),
// milliseconds until the reset (negative once passed), the answer's age in
// milliseconds, the call's cost (0 counts nothing). ARGV[13]: the hash's
// time to live in milliseconds; ARGV[14]: the answer's identity (its
// process's clock when received, in nanoseconds), so that a replica
// passing the same answer again, whose age the two clocks measure a
// little differently each time, is not taken for a newer one; ARGV[15]:
// the time in milliseconds to count at, "" for Redis's clock (the vectors
// set it).
// Returns the wait in milliseconds, as a string: "0" when the call has
// room and is counted.
var headers = redis.NewScript(`
local now
if ARGV[15] ~= '' then
  now = tonumber(ARGV[15])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local wait = 0
local kinds = {}
local fresh = redis.call('HGET', KEYS[1], 'id') ~= ARGV[14]
for k = 0, 1 do
  local b = k * 6
  local p = (k == 0) and 'r.' or 't.'
  local known, cost = tonumber(ARGV[b + 1]) == 1, tonumber(ARGV[b + 6])
  local st = redis.call('HMGET', KEYS[1], p .. 'rem', p .. 'limit', p .. 'reset', p .. 'at', p .. 'sent', p .. 'after')
  local s = {rem = tonumber(st[1]), limit = tonumber(st[2]), reset = tonumber(st[3]), at = tonumber(st[4]),
    sent = tonumber(st[5]) or 0, after = tonumber(st[6]) or 0}
  if known and (s.rem == nil or (fresh and now - tonumber(ARGV[b + 5]) > s.at)) then
    local rem, limit = tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
    local reset, at = now + tonumber(ARGV[b + 4]), now - tonumber(ARGV[b + 5])
    local carry
    if s.rem == nil or at >= s.reset then
      local used = s.after
      if limit > 0 then used = limit - rem end
      carry = math.max(s.after - used, 0)
    else
      local refill = 0
      if s.limit > 0 and s.reset > s.at then
        refill = math.floor((s.limit - s.rem) * (at - s.at) / (s.reset - s.at))
      end
      if rem <= s.rem - s.sent + refill then
        carry = math.min(math.max(s.sent - (s.rem - rem), 0), s.sent)
      end
    end
    if carry ~= nil then
      s = {rem = rem, limit = limit, reset = reset, at = at, sent = carry, after = 0}
    end
  end
  if s.rem ~= nil and cost > 0 then
    local w = 0
    if s.reset > now then
      if s.rem - s.sent < cost then w = s.reset - now end
    elseif s.limit > 0 and s.limit - s.after < cost then
      w = math.max(s.reset - s.at, 10)
    end
    if w > wait then wait = w end
  end
  kinds[#kinds + 1] = {p = p, s = s, cost = cost}
end
for _, k in ipairs(kinds) do
  local s = k.s
  if wait == 0 then
    if s.rem ~= nil and s.reset > now then s.sent = s.sent + k.cost else s.after = s.after + k.cost end
  end
  if s.rem ~= nil then
    redis.call('HSET', KEYS[1], k.p .. 'rem', s.rem, k.p .. 'limit', s.limit, k.p .. 'reset', string.format('%.3f', s.reset),
      k.p .. 'at', string.format('%.3f', s.at))
  end
  redis.call('HSET', KEYS[1], k.p .. 'sent', s.sent, k.p .. 'after', s.after)
end
redis.call('HSET', KEYS[1], 'id', ARGV[14])
redis.call('PEXPIRE', KEYS[1], ARGV[13])
return string.format('%.3f', wait)
`)
