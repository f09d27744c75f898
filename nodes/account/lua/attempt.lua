-- Before copy ARGV[2] sends entry ARGV[1], checked and recorded at once: {2} when it may (its claim,
-- renewed for ARGV[3] ms, or taken back when it lapsed and no copy took it), with the ms since
-- another copy's attempt that had no answer (the gateway may have that one); {1} when the store
-- lost the entry (the copy writes it back first); {0} when another copy holds it or ended it. The
-- attempt is recorded as the copy and the server's time (an earlier one is kept: it is the one the
-- gateway may have). KEYS: the ids, the outbox's prefix (its `entries`, `claim:`, `attempts`,
-- `orphans`, `ended-by` keys).
local q, id, copy = KEYS[2], ARGV[1], ARGV[2]
if redis.call('HEXISTS', q .. 'entries', id) == 0 then
  if redis.call('HEXISTS', q .. 'ended-by', id) == 1 then return {0} end
  return {1}
end
local claim = q .. 'claim:' .. id
local holder = redis.call('GET', claim)
if holder and holder ~= copy then return {0} end
redis.call('SET', claim, copy, 'PX', tonumber(ARGV[3]))
redis.call('HDEL', q .. 'orphans', id)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local earlier = redis.call('HGET', q .. 'attempts', id)
if not earlier then
  redis.call('HSET', q .. 'attempts', id, copy .. ' ' .. now)
  return {2}
end
local by, at = string.match(earlier, '^(%S+) (%d+)$')
if by == copy or not at then return {2} end
return {2, now - tonumber(at)}
