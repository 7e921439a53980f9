-- ensure_default: create the 'default' tube, which always exists, if it does not yet.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV: only the common ones
-- returns 1
ensure_tube('default')
return 1
