-- Up to ARGV[3] entries whose claim lapsed, claimed for ARGV[1]: id, line pairs, oldest first;
-- none more once their lines reach ARGV[5] bytes (so a line of any size goes when it is the first).
local out = {}
local n, bytes = 0, 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if n >= tonumber(ARGV[3]) or (n > 0 and bytes >= tonumber(ARGV[5])) then break end
  local claim = ARGV[4] .. id
  if redis.call('EXISTS', claim) == 0 then
    local line = redis.call('HGET', KEYS[2], id)
    if line then
      redis.call('SET', claim, ARGV[1], 'PX', tonumber(ARGV[2]))
      table.insert(out, id)
      table.insert(out, line)
      n = n + 1
      bytes = bytes + #line
    else
      redis.call('ZREM', KEYS[1], id)
    end
  end
end
return out
