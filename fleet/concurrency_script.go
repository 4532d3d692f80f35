package fleet

import "github.com/redis/go-redis/v9"

// aimdScript is a Concurrency's limit kept in Redis, by the arithmetic of
// ratelimit.Concurrency's own (ratelimit/testdata/aimd.json, whose
// vectors it passes against a real redis-server). It counts the caller
// among the processes that exchanged within the last live milliseconds (a
// sorted set, KEYS[2]) with the cost it has in flight (a hash, KEYS[3]),
// applies a batch of calls' outcomes to the limit in one hash (KEYS[1]:
// limit, epoch, clean, step, ceiling, cutTo, soft, draining, base,
// spread, and the window being filled: wn, wsat, wmin, wsum, queued;
// times in nanoseconds) and returns the limit, the epoch, the step, how
// many processes share the limit and the caller's share: the limit's
// whole calls divided among the processes, the remainder one each to the
// first in the order of their ids, so that the shares add up to the
// limit (a limit of 10 among 6 is 2, 2, 2, 2, 1, 1; not 1⅔ each, which
// admits 1); but after any cut but a probe's first, while the
// processes hold more than the limit, in proportion to what each holds.
// The calls in flight an outcome is weighed against are the fleet's: the
// other processes' as they last said, and the caller's as the outcome
// says. A cut is published on the channel named KEYS[1], so
// that every process takes its new share at once.
//
// ARGV: the process's id, the limit's min, max and initial value, live in
// milliseconds, the cost the process has in flight, the count of
// outcomes, then eight fields for each: cost, overload (1 or 0), hint in
// nanoseconds, clean (1 or 0), the time to the first chunk in nanoseconds
// (0 unread), the epoch at admission, saturated (1 or 0), the cost the
// process had in flight once the call had ended. Durations are truncated
// toward zero as Go's integer division does, and log2 is Go's math.Log2,
// so that both give the same limit.
var aimdScript = redis.NewScript(`
local lo, hi, initial = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local live, held, n = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ms - live)
if #gone > 0 then
  redis.call('HDEL', KEYS[3], unpack(gone))
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms - live)
end
redis.call('ZADD', KEYS[2], ms, ARGV[1])
redis.call('PEXPIRE', KEYS[2], 2 * live)
local ids = redis.call('ZRANGE', KEYS[2], 0, -1)
table.sort(ids)
local rank, others = 0, 0
local heldBy = redis.call('HMGET', KEYS[3], unpack(ids))
for k, v in ipairs(ids) do
  heldBy[k] = tonumber(heldBy[k]) or 0
  if v == ARGV[1] then rank, heldBy[k] = k - 1, held else others = others + heldBy[k] end
end
redis.call('HSET', KEYS[3], ARGV[1], held)
redis.call('PEXPIRE', KEYS[3], 2 * live)

local s = redis.call('HMGET', KEYS[1], 'limit', 'epoch', 'clean', 'step', 'ceiling', 'base', 'spread', 'cutTo', 'soft', 'draining',
  'wn', 'wsat', 'wmin', 'wsum', 'queued')
local limit = tonumber(s[1]) or initial
local epoch = tonumber(s[2]) or 0
local clean = tonumber(s[3]) or 0
local step = tonumber(s[4]) or 1
local ceiling = tonumber(s[5]) or 0
local base = tonumber(s[6]) or 0
local spread = tonumber(s[7]) or 0
local cutTo = tonumber(s[8]) or 0
local soft = s[9] == '1'
local draining = s[10] == '1'
local wn, wsat = tonumber(s[11]) or 0, tonumber(s[12]) or 0
local wmin, wsum = tonumber(s[13]) or 0, tonumber(s[14]) or 0
local queued = s[15] == '1'
local epoch0 = epoch
limit = math.min(hi, math.max(lo, limit))
local function trunc(x)
  if x >= 0 then return math.floor(x) end
  return -math.floor(-x)
end
local inv_ln2 = 1 / math.log(2)
local function log2(x)
  local m, e = math.frexp(x)
  if m == 0.5 then return e - 1 end
  return math.log(m) * inv_ln2 + e
end
local function cut(from, f)
  ceiling = math.max(lo, math.floor(from * 0.95))
  limit = math.max(lo, math.floor(from * f))
  cutTo, soft, draining = limit, false, true
  wn, wsat, wmin, wsum = 0, 0, 0, 0
  epoch = epoch + 1
  clean, step = 0, 1
end
for i = 0, n - 1 do
  local j = 8 + i * 8
  local cost, overload, hint = tonumber(ARGV[j]), ARGV[j + 1] == '1', tonumber(ARGV[j + 2])
  local ok, ttft, at, saturated = ARGV[j + 3] == '1', tonumber(ARGV[j + 4]), tonumber(ARGV[j + 5]), ARGV[j + 6] == '1'
  local inflight = others + tonumber(ARGV[j + 7])
  local closed = false
  if ttft > 0 and at == epoch then
    if wn == 0 or ttft < wmin then wmin = ttft end
    wn, wsum = wn + 1, wsum + ttft
    if saturated then wsat = wsat + 1 end
    if wn >= 16 then
      local fastest, gap, busy = wmin, trunc(wsum / wn) - wmin, 2 * wsat > wn
      wn, wsat, wmin, wsum = 0, 0, 0, 0
      if base == 0 then
        base, spread = fastest, gap
      else
        local shift = fastest - base
        queued = busy and shift > trunc(spread / 2) and shift > trunc(base / 2)
        closed = queued
        spread = spread + trunc((gap - spread) / 8)
        if queued then base = base + trunc(shift / 64) else base = base + trunc(shift / 8) end
      end
    end
  end
  if inflight <= limit then draining = false end
  local fresh = at == epoch and not draining
  if overload and fresh then
    local from, f, probe = limit, 0.7, limit > cutTo
    if hint <= 1e9 and ceiling > 0 and (probe or soft) then
      from, f = math.max(math.min(limit, inflight + cost), limit * 0.7), 0.95
    elseif hint > 1e9 then
      f = math.max(0.1, 0.7 / (1 + log2(hint / 1e9)))
    end
    cut(from, f)
    soft = f == 0.95 and probe
  elseif overload then
    -- a cut since this call was admitted answered it, or is still draining
  elseif closed and fresh then
    cut(limit, 0.9)
  elseif ok and saturated and not queued and epoch == 0 then
    limit = math.min(hi, limit + cost)
  elseif ok and saturated and not queued then
    clean = clean + cost
    local window = limit
    if limit == ceiling and step == 1 then window = window * 4 end
    if clean >= window then
      local nxt = limit + step
      step = math.min(step * 2, math.max(1, limit / 2))
      if limit < ceiling and nxt >= ceiling then nxt, step = ceiling, 1 end
      limit, clean, soft = math.min(hi, nxt), 0, false
      queued = base > 0
    end
  end
end
local f = function(x) return string.format('%.17g', x) end
local flag = function(b) if b then return '1' end return '0' end
redis.call('HSET', KEYS[1], 'limit', f(limit), 'epoch', f(epoch), 'clean', f(clean), 'step', f(step),
  'ceiling', f(ceiling), 'base', f(base), 'spread', f(spread), 'cutTo', f(cutTo), 'soft', flag(soft), 'draining', flag(draining),
  'wn', f(wn), 'wsat', f(wsat), 'wmin', f(wmin), 'wsum', f(wsum), 'queued', flag(queued))
redis.call('PEXPIRE', KEYS[1], 86400000)
if epoch ~= epoch0 then redis.call('PUBLISH', KEYS[1], f(epoch)) end
local whole = math.floor(limit)
local share
if others + held > whole and not soft then
  -- after a cut (but a probe's first, whose excess is a call or so) the
  -- fleet holds more than the limit: each replica keeps its part of the
  -- limit in proportion to what it holds, so that none sends while the
  -- others still hold what the cut took from them
  local total, dealt = others + held, 0
  for k = 1, #ids do
    local part = math.floor(heldBy[k] * whole / total)
    dealt = dealt + part
    if k == rank + 1 then share = part end
  end
  if rank < whole - dealt then share = share + 1 end
else
  share = math.floor(whole / #ids)
  if rank < whole - share * #ids then share = share + 1 end
end
return {f(limit), f(epoch), f(step), #ids, share}
`)
