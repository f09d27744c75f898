-- A copy's look at the account's open incidents (its timer, status and replies read them): renews
-- the claims of copy ARGV[1] on the pending SMS of incidents ARGV[3..] for ARGV[2] ms, and adopts
-- those whose claim lapsed (their copy is gone). Answers the server's time, then per incident: key,
-- code, node, position, due, raised, acknowledged by ('' not), at, body, the count of numbers
-- texted and them, the count of SMS adopted here and them.
-- KEYS[1]: the account's prefix.
local p, copy, claimMs = KEYS[1], ARGV[1], tonumber(ARGV[2])
for a = 3, #ARGV do
  local claim = p .. 'esc:pc:' .. ARGV[a]
  if redis.call('GET', claim) == copy then redis.call('PEXPIRE', claim, claimMs) end
end
local t = redis.call('TIME')
local answer = {tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}
local open = redis.call('HGETALL', p .. 'esc:open')
for o = 1, #open, 2 do
  local code = open[o + 1]
  local i = p .. 'esc:i:' .. code
  local f = redis.call('HMGET', i, 'node', 'position', 'due', 'raised', 'ack', 'ackAt', 'body')
  if f[1] then
    local texted = redis.call('SMEMBERS', p .. 'esc:t:' .. code)
    local adopted = {}
    local pending, claim = p .. 'esc:p:' .. code, p .. 'esc:pc:' .. code
    if not f[5] and redis.call('EXISTS', claim) == 0 and redis.call('HLEN', pending) > 0 then
      redis.call('SET', claim, copy, 'PX', claimMs)
      adopted = redis.call('HVALS', pending)
    end
    local row = {open[o], code, f[1], f[2], f[3], f[4], f[5] or '', f[6] or '0', f[7], #texted}
    for _, v in ipairs(texted) do row[#row + 1] = v end
    row[#row + 1] = #adopted
    for _, v in ipairs(adopted) do row[#row + 1] = v end
    for _, v in ipairs(row) do answer[#answer + 1] = v end
  end
end
return answer
