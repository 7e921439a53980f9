package gatewaytest

import (
	"regexp"
	"strings"
)

// maskedStats are the stats keys whose values depend on the process, the clock or the harness
// rather than on the session: total-connections also counts the probe that waits for
// beanstalkd to listen.
var maskedStats = map[string]bool{
	"pid": true, "version": true, "rusage-utime": true, "rusage-stime": true, "uptime": true,
	"id": true, "hostname": true, "os": true, "platform": true, "total-connections": true,
}

var yamlLine = regexp.MustCompile(`^([a-z-]+): (.*)$`)

// NormaliseReply masks time- and process-dependent YAML values and the quoting difference:
// 1.12 leaves name/tube/hostname/os/platform unquoted, 1.13 and beangate quote them
// (docs/protocol.md §0, 1.13 change 1). The announced size is dropped, since masking and quoting
// change it; checkSize checks it on the raw reply.
func NormaliseReply(reply string) string {
	head, payload, ok := strings.Cut(reply, "\r\n")
	if !ok || !strings.HasPrefix(head, "OK ") || !strings.HasPrefix(payload, "---\n") {
		return reply
	}
	lines := strings.Split(strings.TrimSuffix(payload, "\n\r\n"), "\n")
	kind := "stats"
	if len(lines) > 1 && strings.HasPrefix(lines[1], "name: ") {
		kind = "tube"
	} else if len(lines) > 2 && strings.HasPrefix(lines[2], "tube: ") {
		kind = "job"
	}
	values := map[string]string{}
	for _, l := range lines[1:] {
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			values[m[1]] = m[2]
		}
	}
	for i, l := range lines {
		m := yamlLine.FindStringSubmatch(l)
		if m == nil {
			continue // list-tubes entries, never quoted
		}
		key, v := m[1], strings.Trim(m[2], `"`)
		switch kind {
		case "stats":
			if maskedStats[key] {
				v = "*"
			}
		case "tube":
			// pause-time-left counts down while paused (floor of the remaining seconds).
			if key == "pause-time-left" && values["pause"] != "0" {
				v = "*"
			}
		case "job":
			// age counts up; time-left counts down for reserved and delayed jobs.
			st := values["state"]
			if key == "age" || key == "time-left" && (st == "reserved" || st == "delayed") {
				v = "*"
			}
		}
		lines[i] = key + ": " + v
	}
	return "OK\r\n" + strings.Join(lines, "\n") + "\n\r\n"
}
