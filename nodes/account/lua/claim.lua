-- An alert several copies raise at once goes out once: the first claim wins, the others get {0} (a
-- repeat by the holder is not affected). With a storm limit (ARGV[3], window ARGV[4] ms): {1, 1 if
-- admitted, window id, ms left}; the held count outlives the window a minute, to be collected.
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
