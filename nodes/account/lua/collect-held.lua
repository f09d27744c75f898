-- The count every copy held in a storm window, taken once: the copy that gets it sends the notice.
local n = redis.call('GET', KEYS[1])
if not n then return 0 end
redis.call('DEL', KEYS[1])
return tonumber(n)
