-- Renews copy ARGV[2]'s claims on the entries ARGV[3..] for ARGV[1] ms, and takes back one that
-- lapsed while no other copy took it. Answers {lost, taken}: the ids whose entry the store no
-- longer holds (flushed, evicted, lost in a restart: the copy writes them back), and those another
-- copy holds or ended (the copy lets them go). An entry that ended and whose msg has not left yet
-- (`handing`) is renewed as a waiting one. An id given as `id age` is on the copy's wire, its attempt
-- that many ms old: where the store lost that attempt's record (a restore, a flush), it is recorded
-- again, so a copy that adopts the entry knows the gateway may have it. KEYS: the ids, the outbox's
-- prefix (its `entries`, `claim:`, `orphans`, `ended-by`, `handing`, `attempts` keys).
local q, ms, copy = KEYS[2], tonumber(ARGV[1]), ARGV[2]
local lost, taken = {}, {}
local now
local function record(id, age)
  if not age then return end
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  redis.call('HSETNX', q .. 'attempts', id, copy .. ' ' .. (now - tonumber(age)))
end
for i = 3, #ARGV do
  local id, age = string.match(ARGV[i], '^(%S+) (%d+)$')
  if not id then id = ARGV[i] end
  local claim = q .. 'claim:' .. id
  if redis.call('HEXISTS', q .. 'entries', id) == 0 and not redis.call('ZSCORE', q .. 'handing', id) then
    if redis.call('HEXISTS', q .. 'ended-by', id) == 1 then table.insert(taken, id) else table.insert(lost, id) end
  else
    local holder = redis.call('GET', claim)
    if holder == copy then
      redis.call('PEXPIRE', claim, ms)
      record(id, age)
    elseif not holder then
      redis.call('SET', claim, copy, 'PX', ms)
      redis.call('HDEL', q .. 'orphans', id)
      record(id, age)
    else
      table.insert(taken, id)
    end
  end
end
return {lost, taken}
