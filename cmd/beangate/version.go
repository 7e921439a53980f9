package main

import "runtime/debug"

// version is set at build time with -ldflags "-X main.version=v1.2.3"; otherwise the module
// version from the build info ("(devel)" for a plain go build or go run).
var version = ""

// protocolVersion is the beanstalkd release whose protocol beangate speaks byte for byte.
const protocolVersion = "1.13"

func versionLine() string {
	v := version
	if v == "" {
		v = "(devel)"
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
			v = info.Main.Version
		}
	}
	return "beangate " + v + " (beanstalkd " + protocolVersion + " protocol)"
}
