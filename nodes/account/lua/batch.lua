-- Runs ARGV[1], the calls as JSON [name, keys, arguments], each in its own pcall: {1, value} or
-- {0, error} (nil as false, so the array keeps its length). B.now(): the server's clock in ms, read
-- once; B.atEnd(key, fn): done once after the last call, however many calls ask.
local B, ends, clock = {}, {}, nil
function B.now()
  if not clock then
    local t = redis.call('TIME')
    clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return clock
end
function B.atEnd(key, fn)
  ends[key] = ends[key] or fn
end
local out = {}
for c, call in ipairs(cjson.decode(ARGV[1])) do
  local ok, value = pcall(S[call[1]], call[2], call[3], B)
  if ok then
    if value == nil then value = false end
    out[c] = {1, value}
  else
    out[c] = {0, type(value) == 'table' and value.err or tostring(value)}
  end
end
for _, fn in pairs(ends) do pcall(fn) end
return out
