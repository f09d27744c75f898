-- An entry (ARGV[1]) ended by copy ARGV[2]: gone from the outbox, remembered as ended by it (the
-- newest 10,000, for an hour). Unless ARGV[3] is '1' (ended here for certain), refused with 0 when
-- another copy holds it now or ended it: that copy's end is the msg's one end. Else 1. With how it
-- ended (ARGV[5], JSON), its line is kept with it under the copy's claim (ARGV[4] ms) until its msg
-- left (emitted.lua): a copy that adopts it once that claim lapsed hands the msg on (the newest
-- 10,000, for an hour). KEYS: the ids, the outbox's prefix (its `entries`, `claim:`, `attempts`,
-- `orphans`, `ended`, `ended-by`, `handing`, `handing-lines` keys).
local q, id, copy = KEYS[2], ARGV[1], ARGV[2]
local claim = q .. 'claim:' .. id
if ARGV[3] ~= '1' then
  local holder = redis.call('GET', claim)
  if holder and holder ~= copy then return 0 end
  if redis.call('HEXISTS', q .. 'entries', id) == 0 then
    local by = redis.call('HGET', q .. 'ended-by', id)
    if by and by ~= copy then return 0 end
  end
end
local line = redis.call('HGET', q .. 'entries', id)
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', q .. 'entries', id)
redis.call('HDEL', q .. 'attempts', id)
redis.call('HDEL', q .. 'orphans', id)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- At most 100 old ones go per call: one call stays short, and each done makes room for itself.
local function bound(set, hash)
  local over = redis.call('ZCARD', set) - 10000
  local old = redis.call('ZRANGEBYSCORE', set, '-inf', now - 3600000, 'LIMIT', 0, 100)
  if over > #old then old = redis.call('ZRANGE', set, 0, math.min(over, 100) - 1) end
  if #old > 0 then
    redis.call('ZREM', set, unpack(old))
    redis.call('HDEL', hash, unpack(old))
  end
  redis.call('PEXPIRE', set, 3600000)
  redis.call('PEXPIRE', hash, 3600000)
end
local handing, lines = q .. 'handing', q .. 'handing-lines'
if ARGV[5] and line then
  redis.call('SET', claim, copy, 'PX', tonumber(ARGV[4]))
  redis.call('ZADD', handing, now, id)
  -- How it ended, a newline (JSON holds none), its line.
  redis.call('HSET', lines, id, ARGV[5] .. '\n' .. line)
  bound(handing, lines)
else
  redis.call('DEL', claim)
  redis.call('ZREM', handing, id)
  redis.call('HDEL', lines, id)
end
redis.call('ZADD', q .. 'ended', now, id)
redis.call('HSET', q .. 'ended-by', id, copy)
bound(q .. 'ended', q .. 'ended-by')
return 1
