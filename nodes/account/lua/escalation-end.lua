-- Acknowledges (ARGV[1] 'acknowledge', by ARGV[3]) or ends (anything else) the open incident with
-- key ARGV[2] (and code ARGV[5], when not ''), at whichever copy: the first acknowledgement wins,
-- a second answers {0}; an acknowledged incident takes no step (its pending SMS are dropped: the
-- copy that holds them withdraws them), and stays open until it is resolved. An ended incident is
-- gone, its code quarantined ARGV[4] ms. {1, code, now, raised, body}: the one copy that outputs it.
-- KEYS[1]: the account's prefix.
local p = KEYS[1]
local code = redis.call('HGET', p .. 'esc:open', ARGV[2])
if not code or (ARGV[5] ~= '' and code ~= ARGV[5]) then return {0} end
local i = p .. 'esc:i:' .. code
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', i, 'raised', 'body', 'ack')
if ARGV[1] == 'acknowledge' then
  if f[3] then return {0} end
  redis.call('HSET', i, 'ack', ARGV[3], 'ackAt', now)
  redis.call('DEL', p .. 'esc:p:' .. code, p .. 'esc:pc:' .. code)
else
  redis.call('DEL', i, p .. 'esc:t:' .. code, p .. 'esc:p:' .. code, p .. 'esc:pc:' .. code)
  redis.call('HDEL', p .. 'esc:open', ARGV[2])
  redis.call('ZADD', p .. 'esc:codes', now + tonumber(ARGV[4]), code)
end
redis.call('ZREM', p .. 'esc:due', code)
return {1, code, now, tonumber(f[1]) or now, f[2] or '{}'}
