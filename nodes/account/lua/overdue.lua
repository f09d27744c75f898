-- At most ARGV[3] sends of a stopped copy, no final report ARGV[1] ms after their time: output 3
-- claimed here (for ARGV[2] ms) unless a report came or a copy claimed it (a copy's own watch took
-- its own out). KEYS: the waiting sends, the account's prefix (its `final:`, `late:`, `sent:` keys).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[3]))) do
  redis.call('ZREM', KEYS[1], id)
  if redis.call('EXISTS', KEYS[2] .. 'final:' .. id) == 0 and redis.call('SET', KEYS[2] .. 'late:' .. id, '1', 'NX', 'PX', tonumber(ARGV[2])) then
    local record = redis.call('GET', KEYS[2] .. 'sent:' .. id)
    if record then table.insert(out, record) end
  end
end
return out
