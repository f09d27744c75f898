-- The shared outbox: lines in a hash, ids in a sorted set by the server's time of arrival, a claim
-- per entry held by its copy while it runs: once it lapses, another copy adopts it. Bounded like
-- the file's. ARGV: the id, its line, the copy, the claim's ms, the bound (answers 1 when that many
-- wait), the entry's age in ms (how long its msg waited before; a line written back is as old as
-- it is). KEYS: the ids, the outbox's prefix (its `entries`, `claim:`, `orphans` keys).
local q, id = KEYS[2], ARGV[1]
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now - tonumber(ARGV[6]), id)
redis.call('HSET', q .. 'entries', id, ARGV[2])
redis.call('SET', q .. 'claim:' .. id, ARGV[3], 'PX', tonumber(ARGV[4]))
redis.call('HDEL', q .. 'orphans', id)
return 0
