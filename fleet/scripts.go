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
// KEYS[1]: the bucket. ARGV: seconds per token, burst, tokens, the longest
// wait accepted in seconds (-1: any). Returns {admitted, wait in seconds,
// how far the TAT is ahead of now afterwards, in seconds}: the bucket holds
// burst less that many seconds' tokens, and promised waits beyond empty.
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = (tonumber(t[1]) - 1700000000) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local new_tat = tat + n * interval
local wait = new_tat - burst * interval - now
if wait < 0 then wait = 0 end
if n > 0 and max_wait >= 0 and wait > max_wait then
  return {0, string.format('%.6f', wait), string.format('%.6f', tat - now)}
end
if new_tat > now then
  redis.call('SET', KEYS[1], string.format('%.6f', new_tat), 'PX', math.ceil((new_tat - now) * 1000) + 1000)
else
  redis.call('DEL', KEYS[1])
end
local ahead = new_tat - now
if ahead < 0 then ahead = 0 end
return {1, string.format('%.6f', wait), string.format('%.6f', ahead)}
`)

// exchange adds one process's attempt counts to the fleet's and returns the
// fleet's over the last window. The counts live in one hash (KEYS[1]), a
// field per kind and time slot ("f.<slot>": first attempts, "r.<slot>":
// retries, "ok.<slot>": retries that succeeded); fields older than the
// window are deleted as they are met. The processes that exchanged within
// the window are a sorted set (KEYS[2]) scored by the time they last did.
//
// ARGV: first attempts, retries, retries that succeeded, the process's id,
// the slot in milliseconds, the slots in a window. Returns {first attempts,
// retries, retries that succeeded, processes}.
var exchange = redis.NewScript(`
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot_ms = tonumber(ARGV[5])
local slots = tonumber(ARGV[6])
local slot = math.floor(ms / slot_ms)
local add = {f = tonumber(ARGV[1]), r = tonumber(ARGV[2]), ok = tonumber(ARGV[3])}
for kind, n in pairs(add) do
  if n ~= 0 then redis.call('HINCRBY', KEYS[1], kind .. '.' .. slot, n) end
end
local sums = {f = 0, r = 0, ok = 0}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local kind, s = string.match(all[i], '^(%a+)%.(%d+)$')
  s = tonumber(s)
  if s == nil or s <= slot - slots then
    redis.call('HDEL', KEYS[1], all[i])
  else
    sums[kind] = (sums[kind] or 0) + tonumber(all[i + 1])
  end
end
local window = slot_ms * slots
redis.call('PEXPIRE', KEYS[1], 2 * window)
redis.call('ZADD', KEYS[2], ms, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms - window)
redis.call('PEXPIRE', KEYS[2], 2 * window)
return {sums.f, sums.r, sums.ok, redis.call('ZCARD', KEYS[2])}
`)
