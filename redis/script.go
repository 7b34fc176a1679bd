package agileredis

import "github.com/redis/go-redis/v9"

// reserve is the GCRA with reservation, run atomically by Redis in one
// round trip (EVALSHA, and EVAL once if Redis lost its script cache).
//
// The key holds the theoretical arrival time (TAT): the instant, in
// microseconds on Redis's clock, at which the quota's next free slot
// begins. A reservation of n slots takes [tat, tat+n*T) where tat is the
// later of the TAT and now, and answers the wait from now to tat, in
// microseconds (rounded up), and the slots reserved. When that wait is
// longer than the caller's bound it reserves nothing and answers the wait
// with 0 slots; n = 0 only reads the wait (the fallback's probe).
//
//	KEYS[1]  the quota's key
//	ARGV[1]  T: microseconds between two slots (1/Rate), a decimal
//	ARGV[2]  n: slots wanted
//	ARGV[3]  the longest wait accepted, microseconds; negative: no bound
//	ARGV[4]  milliseconds the key outlives its last slot
//
// The clock is Redis's TIME, read inside the script, so the instances'
// own clocks never enter the reckoning: they only add the wait to the
// instant the answer arrived. Scripts may call TIME before writing on
// Redis 5 and later (effects replication, the default since 5.0).
var reserve = redis.NewScript(`
local T = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local bound = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
	tat = now
end
local wait = math.ceil(tat - now)
if n <= 0 or (bound >= 0 and wait > bound) then
	return {wait, 0}
end
local last = tat + n * T
redis.call('SET', KEYS[1], string.format('%.3f', last), 'PX', math.ceil((last - now) / 1000) + tonumber(ARGV[4]))
return {wait, n}
`)
