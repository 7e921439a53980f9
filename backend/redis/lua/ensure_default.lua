-- ensure_default: create the 'default' tube, which always exists, if it does not yet.
-- ARGV: only the common ones
-- returns 1
ensure_tube('default')
return 1
