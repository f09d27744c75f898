-- One alert raised by several copies at once (the same node and body, within the window) goes out
-- once: the first copy to claim it sends it; another copy's claim answers "copy" ({0}). A repeat
-- from the copy that holds the claim is not affected (the GET below).
-- With the node's storm guard on (ARGV[3] a limit above 0, ARGV[4] its window, ms), the alert is
-- counted in the node's window shared by the copies (KEYS[2]: `n` counted, `w` the window's id):
-- {1, 1 admitted or 0 held, window id, ms until it ends}. A held one counts in the window's held
-- key, which outlives the window by a minute so that a copy can collect it for the notice.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', tonumber(ARGV[2])) and redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
local limit = tonumber(ARGV[3] or '0')
if limit <= 0 then return {1} end
local n = redis.call('HINCRBY', KEYS[2], 'n', 1)
if n == 1 then
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[2], 'w', t[1] .. '.' .. t[2])
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[4]))
end
local w = redis.call('HGET', KEYS[2], 'w') or ''
local ttl = math.max(0, redis.call('PTTL', KEYS[2]))
if n <= limit then return {1, 1, w, ttl} end
local held = KEYS[2] .. ':held:' .. w
redis.call('INCR', held)
redis.call('PEXPIRE', held, ttl + 60000)
return {1, 0, w, ttl}
