-- The count every copy held in a storm window, taken once: the copy that gets it sends the notice.
local n = redis.call('GET', KEYS[1])
if n then redis.call('DEL', KEYS[1]) end
return tonumber(n) or 0
