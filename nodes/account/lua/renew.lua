-- Renews this copy's (ARGV[2]) claims on the ids ARGV[3..] for ARGV[1] ms; answers the ids whose
-- entry the store no longer holds (flushed, evicted, lost in a restart). KEYS: the lines, the claims' prefix.
local lost = {}
for i = 3, #ARGV do
  local claim = KEYS[2] .. ARGV[i]
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    table.insert(lost, ARGV[i])
  elseif redis.call('GET', claim) == ARGV[2] then
    redis.call('PEXPIRE', claim, tonumber(ARGV[1]))
  end
end
return lost
