-- Copy ARGV[2]'s attempt of entry ARGV[1] had an answer that it did not reach the gateway: its
-- record goes (another copy's stays: the gateway may have that one). KEYS: the ids, the outbox's
-- prefix (its `attempts` key).
local earlier = redis.call('HGET', KEYS[2] .. 'attempts', ARGV[1])
if earlier and string.sub(earlier, 1, #ARGV[2] + 1) == ARGV[2] .. ' ' then redis.call('HDEL', KEYS[2] .. 'attempts', ARGV[1]) end
return 0
