-- Gives back the newest `n` messages reserved (they never reached the gateway).
redis.call('ZPOPMAX', KEYS[1], tonumber(ARGV[1])) return 0
