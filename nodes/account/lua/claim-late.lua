redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('SET', KEYS[2], '1', 'NX', 'PX', tonumber(ARGV[1])) then return 1 end
return 0
