-- The shared outbox: lines in a hash, ids in a sorted set by time, a claim per entry held by its
-- copy while it runs: once it lapses, another copy adopts it. Bounded like the file's.
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[6]) then return 1 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('SET', KEYS[3], ARGV[4], 'PX', tonumber(ARGV[5]))
return 0
