package main

// Exit statuses. 5 and 111 are beanstalkd's, so scripts and unit files that check them keep
// working.
const (
	exitOK      = 0
	exitFailure = 1   // the backend could not be opened, or the server failed while serving
	exitUsage   = 5   // bad flag, stray argument, or a configuration that does not validate
	exitLocked  = 10  // the binlog directory is locked by another server
	exitBind    = 111 // the listen address could not be bound
)
