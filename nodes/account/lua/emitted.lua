-- The msgs of entries ARGV[2..] left their node at copy ARGV[1]: their lines go, and the copy's
-- claims on them (one another copy holds now is that copy's to hand on). KEYS: the ids, the
-- outbox's prefix (its `claim:`, `orphans`, `handing`, `handing-lines` keys).
local q, copy = KEYS[2], ARGV[1]
for i = 2, #ARGV do
  local id = ARGV[i]
  local claim = q .. 'claim:' .. id
  local holder = redis.call('GET', claim)
  if not holder or holder == copy then
    redis.call('DEL', claim)
    redis.call('ZREM', q .. 'handing', id)
    redis.call('HDEL', q .. 'handing-lines', id)
    redis.call('HDEL', q .. 'orphans', id)
  end
end
return 0
