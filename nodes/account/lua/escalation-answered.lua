-- A chain SMS's answer is recorded (taken, kept in the outbox, failed for good): the pending
-- ARGV[2] of incident ARGV[1] and its claim are gone, no copy sends it again. ARGV[3] (not ''): the
-- number as the gateway wrote it, which may reply.
-- KEYS[1]: the account's prefix.
local p, code = KEYS[1], ARGV[1]
if ARGV[2] ~= '' then
  redis.call('HDEL', p .. 'esc:p:' .. code, ARGV[2])
  redis.call('HDEL', p .. 'esc:pc:' .. code, ARGV[2])
end
if ARGV[3] ~= '' and redis.call('EXISTS', p .. 'esc:i:' .. code) == 1 then redis.call('SADD', p .. 'esc:t:' .. code, ARGV[3]) end
return 1
