-- A chain SMS's answer is recorded (taken, kept in the outbox, failed for good): the pending
-- ARGV[2] of incident ARGV[1] is not sent again by a copy that adopts; the last one frees the
-- claim of copy ARGV[4]. ARGV[3] (not ''): the number as the gateway wrote it, which may reply.
-- KEYS[1]: the account's prefix.
local p, code = KEYS[1], ARGV[1]
local pending = p .. 'esc:p:' .. code
if ARGV[2] ~= '' then
  redis.call('HDEL', pending, ARGV[2])
  local claim = p .. 'esc:pc:' .. code
  if redis.call('HLEN', pending) == 0 and redis.call('GET', claim) == ARGV[4] then redis.call('DEL', claim) end
end
if ARGV[3] ~= '' and redis.call('EXISTS', p .. 'esc:i:' .. code) == 1 then redis.call('SADD', p .. 'esc:t:' .. code, ARGV[3]) end
return 1
