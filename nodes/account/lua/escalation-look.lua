-- A copy's look at the account's open incidents (its timer, status and replies read them): renews
-- the claims of copy ARGV[1] on the pending SMS of incidents ARGV[3..] for ARGV[2] ms, and adopts
-- each pending SMS whose claim lapsed (its copy is gone). A claim is the copy and until when (the
-- server's ms), per SMS: a step another copy takes later leaves it alone. Answers the server's
-- time, then per incident: key, code, node, position, due, raised, acknowledged by ('' not), at,
-- body, the count of numbers texted and them, the count of SMS adopted here and them.
-- KEYS[1]: the account's prefix.
local p, copy, claimMs = KEYS[1], ARGV[1], tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local mine = copy .. '|' .. (now + claimMs)
for a = 3, #ARGV do
  local claims = p .. 'esc:pc:' .. ARGV[a]
  local held = redis.call('HGETALL', claims)
  for h = 1, #held, 2 do
    if string.sub(held[h + 1], 1, #copy + 1) == copy .. '|' then redis.call('HSET', claims, held[h], mine) end
  end
end
local answer = {now}
local open = redis.call('HGETALL', p .. 'esc:open')
for o = 1, #open, 2 do
  local code = open[o + 1]
  local f = redis.call('HMGET', p .. 'esc:i:' .. code, 'node', 'position', 'due', 'raised', 'ack', 'ackAt', 'body')
  if f[1] then
    local texted = redis.call('SMEMBERS', p .. 'esc:t:' .. code)
    local adopted = {}
    if not f[5] then
      local claims = p .. 'esc:pc:' .. code
      local pending = redis.call('HGETALL', p .. 'esc:p:' .. code)
      for q = 1, #pending, 2 do
        local holder = redis.call('HGET', claims, pending[q])
        local untilMs = holder and tonumber(string.match(holder, '|(%d+)$')) or 0
        if untilMs <= now then
          redis.call('HSET', claims, pending[q], mine)
          adopted[#adopted + 1] = pending[q + 1]
        end
      end
    end
    local row = {open[o], code, f[1], f[2], f[3], f[4], f[5] or '', f[6] or '0', f[7], #texted}
    for _, v in ipairs(texted) do row[#row + 1] = v end
    row[#row + 1] = #adopted
    for _, v in ipairs(adopted) do row[#row + 1] = v end
    for _, v in ipairs(row) do answer[#answer + 1] = v end
  end
end
return answer
