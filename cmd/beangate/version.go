package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3" (the Makefile passes `git
// describe` when the commit has a tag before it); otherwise it is the module version the Go
// toolchain stamps from the build info: the tag, or a pseudo-version of the commit, "+dirty"
// for a tree with changes, "(devel)" without version control (go run, go test).
var version = ""

// commit and commitDate are set by the Makefile with -ldflags -X from git, for the builds whose
// build info lacks them (a git worktree, -buildvcs=false); otherwise the build info's
// vcs.revision (+"-dirty") and vcs.time give them.
var commit, commitDate = "", ""

// protocolVersion is the beanstalkd release whose protocol beangate speaks byte for byte.
const protocolVersion = "1.13"

// versionLine is the first line of -v, and what the start-up log names.
func versionLine() string {
	return "beangate " + buildVersion() + " (beanstalkd " + protocolVersion + " protocol)"
}

// versionText is what -v prints: versionLine, then where the binary comes from. The date is
// the commit's (vcs.time), not the build's, so that two builds of one commit are the same.
func versionText() string {
	var b strings.Builder
	b.WriteString(versionLine() + "\n")
	commit, date := buildRevision(), buildCommitTime()
	if commit == "" {
		commit = "unknown"
	}
	if date == "" {
		date = "unknown"
	}
	b.WriteString("commit " + commit + ", commit date " + date + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n")
	return b.String()
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
// had changes; "" when the build did not record it (go run, go test, a plain go build).
func buildRevision() string {
	if commit != "" {
		return commit
	}
	rev := buildSetting("vcs.revision")
	if rev == "" {
		return ""
	}
	if buildSetting("vcs.modified") == "true" {
		rev += "-dirty"
	}
	return rev
}

// buildCommitTime is the commit time of buildRevision (RFC 3339, UTC), "" when not recorded.
func buildCommitTime() string {
	if commitDate != "" {
		return commitDate
	}
	return buildSetting("vcs.time")
}

func buildSetting(key string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
