-- Entries whose claim lapsed. Each is first marked an orphan (the server's time); only once it stayed
-- one for ARGV[5] ms (every living copy has looked meanwhile: taken back what it holds, ended again
-- what it had ended) is it adopted: up to ARGV[3], oldest first, claimed for copy ARGV[1] for ARGV[2]
-- ms, none more once their lines reach ARGV[4] bytes (so a line of any size goes when it is the
-- first). Answers {adopted, orphans, handing}: for each adopted its id, line, ms since it was kept,
-- and ms since an attempt that had no answer (-1: none); the ids of the orphans not adopted (at most
-- 1,000); for each entry that ended and whose msg had not left when its copy's claim lapsed (it
-- died), adopted alike after the grace, its id and how it ended with its line (done.lua).
-- KEYS: the ids, the outbox's prefix (its `entries`, `claim:`, `attempts`, `orphans`, `handing`,
-- `handing-lines` keys).
local q, copy = KEYS[2], ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local marked = redis.call('HLEN', q .. 'orphans') > 0
local adopted, orphans = {}, {}
local n, bytes = 0, 0
local ids = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #ids, 2 do
  local id, keptAt = ids[i], tonumber(ids[i + 1])
  if redis.call('EXISTS', q .. 'claim:' .. id) == 1 then
    if marked then redis.call('HDEL', q .. 'orphans', id) end
  else
    local line = redis.call('HGET', q .. 'entries', id)
    if not line then
      redis.call('ZREM', KEYS[1], id)
      redis.call('HDEL', q .. 'orphans', id)
      redis.call('HDEL', q .. 'attempts', id)
    else
      local seen = tonumber(redis.call('HGET', q .. 'orphans', id))
      if not seen then
        seen = now
        redis.call('HSET', q .. 'orphans', id, now)
      end
      if now - seen < tonumber(ARGV[5]) or n >= tonumber(ARGV[3]) or (n > 0 and bytes >= tonumber(ARGV[4])) then
        if #orphans < 1000 then table.insert(orphans, id) end
      else
        redis.call('SET', q .. 'claim:' .. id, copy, 'PX', tonumber(ARGV[2]))
        redis.call('HDEL', q .. 'orphans', id)
        local earlier = redis.call('HGET', q .. 'attempts', id)
        local at = earlier and tonumber(string.match(earlier, ' (%d+)$'))
        table.insert(adopted, id)
        table.insert(adopted, line)
        table.insert(adopted, now - keptAt)
        table.insert(adopted, at and now - at or -1)
        n = n + 1
        bytes = bytes + #line
      end
    end
  end
end
local handing = {}
local ended = redis.call('ZRANGE', q .. 'handing', 0, -1)
for _, id in ipairs(ended) do
  if redis.call('EXISTS', q .. 'claim:' .. id) == 1 then
    if marked then redis.call('HDEL', q .. 'orphans', id) end
  else
    local text = redis.call('HGET', q .. 'handing-lines', id)
    local seen = tonumber(redis.call('HGET', q .. 'orphans', id))
    if text and not seen then
      seen = now
      redis.call('HSET', q .. 'orphans', id, now)
    end
    if not text then
      redis.call('ZREM', q .. 'handing', id)
    elseif now - seen < tonumber(ARGV[5]) or n >= tonumber(ARGV[3]) then
      if #orphans < 1000 then table.insert(orphans, id) end
    else
      redis.call('SET', q .. 'claim:' .. id, copy, 'PX', tonumber(ARGV[2]))
      redis.call('HDEL', q .. 'orphans', id)
      table.insert(handing, id)
      table.insert(handing, text)
      n = n + 1
    end
  end
end
return {adopted, orphans, handing}
