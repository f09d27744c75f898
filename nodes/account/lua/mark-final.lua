redis.call('ZREM', KEYS[2], ARGV[2]) return redis.call('SET', KEYS[1], '1', 'PX', tonumber(ARGV[1]))
