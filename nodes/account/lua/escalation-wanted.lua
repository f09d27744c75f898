-- Whether a chain SMS of the incident with key ARGV[1] and code ARGV[2], kept in an outbox, should
-- still go (asked before each attempt, at whichever copy holds it): 1 while the incident is open and
-- unacknowledged, or when its chain ran out (nobody acknowledged); 0 once it was acknowledged,
-- resolved or its node deleted, or when it is unknown.
-- KEYS[1]: the account's prefix.
local p = KEYS[1]
local f = redis.call('HMGET', p .. 'esc:i:' .. ARGV[2], 'key', 'ack')
if f[1] then
  if f[1] == ARGV[1] and not f[2] then return 1 end
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ran = redis.call('ZSCORE', p .. 'esc:ran', ARGV[2])
if ran and tonumber(ran) > now then return 1 end
return 0
