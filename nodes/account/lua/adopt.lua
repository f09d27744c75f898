-- Up to ARGV[3] entries whose claim lapsed, claimed for ARGV[1] for ARGV[2] ms: id, line pairs,
-- oldest first; none more once their lines reach ARGV[4] bytes (so a line of any size goes when it
-- is the first). KEYS: the ids by arrival, the lines, the claims' prefix (a claim is it and the id).
local out = {}
local n, bytes = 0, 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if n >= tonumber(ARGV[3]) or (n > 0 and bytes >= tonumber(ARGV[4])) then break end
  local claim = KEYS[3] .. id
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
