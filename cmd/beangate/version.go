package main

import "runtime/debug"

// version is set at build time with -ldflags "-X main.version=v1.2.3"; otherwise the module
// version from the build info ("(devel)" for a plain go build or go run).
var version = ""

// protocolVersion is the beanstalkd release whose protocol beangate speaks byte for byte.
const protocolVersion = "1.13"

func versionLine() string {
	return "beangate " + buildVersion() + " (beanstalkd " + protocolVersion + " protocol)"
}

// buildVersion is version, or the module's version from the build info.
func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// buildRevision is the VCS revision the binary was built from, "-dirty" appended when the tree
// had changes; "" when the build did not record it (go run, go test).
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
