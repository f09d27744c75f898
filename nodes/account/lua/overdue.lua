-- The sends of a copy that stopped, still waiting for a final report ARGV[1] ms after their time
-- (the server's clock), at most ARGV[3]: each leaves the waiting set, and output 3 is claimed for
-- it here unless a final report came or a copy claimed it already. What the sending copy's own
-- watch fires is never here: it leaves the set then.
local now = B.now()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  if redis.call('EXISTS', ARGV[4] .. id) == 0 and redis.call('SET', ARGV[5] .. id, '1', 'NX', 'PX', tonumber(ARGV[2])) then
    local record = redis.call('GET', ARGV[6] .. id)
    if record then table.insert(out, record) end
  end
end
return out
