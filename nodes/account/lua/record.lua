-- Each accepted send (ARGV[1], its id ARGV[4]) as a key that expires after ARGV[2] ms, the newest
-- ARGV[3] in a sorted set (older ones deleted with their keys), and the last send to each number
-- (ARGV[5]). KEYS: the sends by acceptance, those waiting for a report by when their time counts
-- from (ARGV[6] ms from now: a schedule's wait ahead, or how long ago it began), both on the
-- server's clock (every copy's look for overdue sends reads it), the account's prefix (its `sent:`
-- and `to:` keys).
local age, id, number = tonumber(ARGV[2]), ARGV[4], ARGV[5]
local p = KEYS[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', p .. 'sent:' .. id, ARGV[1], 'PX', age)
if number ~= '' then redis.call('SET', p .. 'to:' .. number, id, 'PX', age) end
redis.call('ZADD', KEYS[1], now, id)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), id)
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  for i = 1, #old, 1000 do
    local gone, sent = {}, {}
    for j = i, math.min(i + 999, #old) do
      gone[#gone + 1] = old[j]
      sent[#sent + 1] = p .. 'sent:' .. old[j]
    end
    redis.call('DEL', unpack(sent))
    redis.call('ZREM', KEYS[2], unpack(gone))
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
end
redis.call('PEXPIRE', KEYS[1], age)
redis.call('PEXPIRE', KEYS[2], age)
return 0
