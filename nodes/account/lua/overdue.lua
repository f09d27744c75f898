-- At most ARGV[3] sends of a stopped copy, no final report ARGV[1] ms after their time: output 3
-- claimed here unless a report came or a copy claimed it (a copy's own watch took its own out).
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', B.now() - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[3]))) do
  redis.call('ZREM', KEYS[1], id)
  if redis.call('EXISTS', ARGV[4] .. id) == 0 and redis.call('SET', ARGV[5] .. id, '1', 'NX', 'PX', tonumber(ARGV[2])) then
    local record = redis.call('GET', ARGV[6] .. id)
    if record then table.insert(out, record) end
  end
end
return out
