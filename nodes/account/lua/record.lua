-- Each accepted send as a key that expires, the newest ARGV[4] in a sorted set (older ones deleted
-- once per batch), and the last send to each number.
local p, age, id, number = ARGV[1], tonumber(ARGV[3]), ARGV[5], ARGV[6]
redis.call('SET', p .. 'sent:' .. id, ARGV[2], 'PX', age)
if number ~= '' then redis.call('SET', p .. 'to:' .. number, id, 'PX', age) end
redis.call('ZADD', p .. 'sent', ARGV[7], id)
redis.call('ZADD', p .. 'waiting', ARGV[8], id)
B.atEnd('bound:' .. p, function()
  local over = redis.call('ZCARD', p .. 'sent') - tonumber(ARGV[4])
  if over > 0 then
    local old = redis.call('ZRANGE', p .. 'sent', 0, over - 1)
    for i = 1, #old, 1000 do
      local gone, sent = {}, {}
      for j = i, math.min(i + 999, #old) do
        gone[#gone + 1] = old[j]
        sent[#sent + 1] = p .. 'sent:' .. old[j]
      end
      redis.call('DEL', unpack(sent))
      redis.call('ZREM', p .. 'waiting', unpack(gone))
    end
    redis.call('ZREMRANGEBYRANK', p .. 'sent', 0, over - 1)
  end
  redis.call('PEXPIRE', p .. 'sent', age)
  redis.call('PEXPIRE', p .. 'waiting', age)
end)
return 0
