-- restore: put back what a store that lost data (see lib.lua) has forgotten and a gateway still
-- knows: the 'default' tube, which always exists, and the job id sequence's floor, so that no id
-- the gateway has handed out is given again. Each gateway runs it at start, as soon as it has
-- reconnected to Redis, and with every heartbeat.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = floor: the highest job id the gateway has handed out (0: none)
-- returns 1
ensure_tube('default')
raise_ids(tonumber(ARGV[3]))
return 1
