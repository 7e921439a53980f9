//go:build !linux

package gateway

import (
	"runtime"
	"time"
)

func unameVersionMachine() (version, machine string) { return runtime.GOOS, runtime.GOARCH }

func rusage() (user, system time.Duration) { return 0, 0 }
