-- The shared window: the messages sent, scored by the server's time. Counts as many of the sends
-- ARGV[4..] (messages each) as fit, in order: {passed, ms until the oldest leaves or 0}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local windowMs = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
local count = redis.call('ZCARD', KEYS[1])
local passed, seq = 0, 0
for i = 4, #ARGV do
  local n = tonumber(ARGV[i])
  if count + n > tonumber(ARGV[2]) then
    if passed > 0 then redis.call('PEXPIRE', KEYS[1], windowMs) end
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    local first = oldest[2] and tonumber(oldest[2]) or now
    return {passed, math.max(0, first + windowMs - now) + 1}
  end
  for j = 1, n do
    seq = seq + 1
    redis.call('ZADD', KEYS[1], now, ARGV[3] .. ':' .. seq)
  end
  count = count + n
  passed = passed + 1
end
redis.call('PEXPIRE', KEYS[1], windowMs)
return {passed, 0}
