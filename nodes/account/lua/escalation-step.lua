-- The next step of incident ARGV[1], fired by one copy: the first copy to call once it is due (the
-- server's time) takes it; an acknowledged or ended incident, or one not due (another copy took
-- it), is refused: {0, its due or 0, now}. Taken: {1, now, step, round, late, next due, numbers...},
-- each number texted and pending, each SMS held by copy ARGV[2] for ARGV[3] ms (renewed while it
-- sends; lapsed, another copy adopts it). Late: due for longer than a claim (no copy was there); the
-- steps missed before it are not replayed, and the next is due one wait after it. Past the last
-- step: the chain ran out, the incident ends here (its code quarantined ARGV[4] ms, and marked as run
-- out as long: its SMS still kept in an outbox go, escalation-wanted.lua): {2, now, raised, key, body}.
-- KEYS[1]: the account's prefix.
local p, code = KEYS[1], ARGV[1]
local i = p .. 'esc:i:' .. code
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', i, 'position', 'due', 'ack', 'plan', 'raised', 'key', 'body')
if not f[1] or f[3] then return {0, 0, now} end
local position, due = tonumber(f[1]), tonumber(f[2])
if due > now then return {0, due, now} end
local plan = cjson.decode(f[4])
local n = #plan.waits
local total = n * plan['repeat']
local late = now - due > tonumber(ARGV[3])
while position < total and due + plan.waits[position % n + 1] * 1000 <= now do
  due = due + plan.waits[position % n + 1] * 1000
  position = position + 1
  late = true
end
if position >= total then
  redis.call('DEL', i, p .. 'esc:t:' .. code, p .. 'esc:p:' .. code, p .. 'esc:pc:' .. code)
  redis.call('HDEL', p .. 'esc:open', f[6])
  redis.call('ZREM', p .. 'esc:due', code)
  redis.call('ZADD', p .. 'esc:codes', now + tonumber(ARGV[4]), code)
  redis.call('ZREMRANGEBYSCORE', p .. 'esc:ran', '-inf', now)
  redis.call('ZADD', p .. 'esc:ran', now + tonumber(ARGV[4]), code)
  return {2, now, tonumber(f[5]), f[6], f[7]}
end
local index = position % n
local round = math.floor(position / n) + 1
local nextDue = (late and now or due) + plan.waits[index + 1] * 1000
local answer = {1, now, index + 1, round, late and 1 or 0, nextDue}
local held = ARGV[2] .. '|' .. (now + tonumber(ARGV[3]))
for _, number in ipairs(plan.numbers[index + 1]) do
  local field = round .. ':' .. (index + 1) .. ':' .. number
  redis.call('SADD', p .. 'esc:t:' .. code, number)
  redis.call('HSET', p .. 'esc:pc:' .. code, field, held)
  redis.call('HSET', p .. 'esc:p:' .. code, field,
    '{"step":' .. (index + 1) .. ',"round":' .. round .. ',"number":' .. cjson.encode(number) .. ',"late":' .. (late and 'true' or 'false') .. '}')
  answer[#answer + 1] = number
end
redis.call('HSET', i, 'position', position + 1, 'due', nextDue)
redis.call('ZADD', p .. 'esc:due', nextDue, code)
return answer
