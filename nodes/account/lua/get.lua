return redis.call('GET', KEYS[1])
