-- Renews this copy's claims; answers the ids whose entry the store no longer holds (flushed, evicted, lost in a restart).
local lost = {}
for i = 4, #ARGV do
  local claim = ARGV[2] .. ARGV[i]
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    table.insert(lost, ARGV[i])
  elseif redis.call('GET', claim) == ARGV[3] then
    redis.call('PEXPIRE', claim, tonumber(ARGV[1]))
  end
end
return lost
