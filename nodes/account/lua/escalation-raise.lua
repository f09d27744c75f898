-- One incident per key across copies: the first raise of a key makes it, a raise while it is open
-- answers {0, its code}. Its code is the first of the candidates ARGV[5..] (random, from the copy)
-- that no open incident holds and none that ended within the quarantine; all taken: the first free
-- one counting up from 10. Made: {1, code, the server's time in ms}; its first step is due then.
-- KEYS[1]: the account's prefix. ARGV: the key, the node, the raising msg and policy (JSON), the
-- plan the steps script reads (JSON: numbers and waits per step, repeat).
local p = KEYS[1]
local open = p .. 'esc:open'
local existing = redis.call('HGET', open, ARGV[1])
if existing then return {0, existing} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local codes = p .. 'esc:codes'
redis.call('ZREMRANGEBYSCORE', codes, '-inf', now)
local code
for i = 5, #ARGV do
  if not redis.call('ZSCORE', codes, ARGV[i]) then
    code = ARGV[i]
    break
  end
end
local digits = 2
while not code do
  for c = 10 ^ (digits - 1), 10 ^ digits - 1 do
    if not redis.call('ZSCORE', codes, string.format('%d', c)) then
      code = string.format('%d', c)
      break
    end
  end
  digits = digits + 1
end
-- Open: held until it ends (then for the quarantine).
redis.call('ZADD', codes, '+inf', code)
redis.call('HSET', open, ARGV[1], code)
redis.call('HSET', p .. 'esc:i:' .. code, 'key', ARGV[1], 'node', ARGV[2], 'body', ARGV[3], 'plan', ARGV[4], 'position', 0, 'due', now, 'raised', now)
redis.call('ZADD', p .. 'esc:due', now, code)
return {1, code, now}
