package main

import (
	"errors"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// Exit statuses. 5 and 111 are beanstalkd's, so scripts and unit files that check them keep
// working.
const (
	exitOK      = 0
	exitFailure = 1   // the backend could not be opened, or the server failed while serving
	exitUsage   = 5   // bad flag, stray argument, or a configuration that does not validate
	exitLocked  = 10  // the binlog directory is locked by another server
	exitBind    = 111 // the listen address could not be bound
)

// exitStatus is the exit status for a store that could not be opened: a URL or option that
// can never work is bad configuration (5, which a systemd unit does not restart on), a binlog
// directory held by another server is 10, anything else 1.
func exitStatus(err error) int {
	switch {
	case errors.Is(err, backend.ErrBadOptions):
		return exitUsage
	case errors.Is(err, binlog.ErrLocked):
		return exitLocked
	}
	return exitFailure
}
