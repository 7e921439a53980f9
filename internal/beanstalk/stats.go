package beanstalk

import (
	"bytes"
	"strconv"
	"strings"
)

// Stats is the flat YAML of stats, stats-tube and stats-job: each value as the server sent it
// (beanstalkd 1.13 quotes names and strings, 1.12 does not).
type Stats map[string]string

// ParseStats reads `key: value` lines; other lines ("---") are skipped.
func ParseStats(data []byte) Stats {
	s := Stats{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if k, v, ok := strings.Cut(string(line), ": "); ok {
			s[k] = v
		}
	}
	return s
}

// String is a value without the quotes 1.13 puts around it.
func (s Stats) String(key string) string { return unquote(s[key]) }

// Uint is a numeric value; 0 when it is missing or not a number.
func (s Stats) Uint(key string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimSpace(s[key]), 10, 64)
	return n
}

// ParseList reads the YAML list of list-tubes and list-tubes-watched, names unquoted.
func ParseList(data []byte) []string {
	var out []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if name, ok := strings.CutPrefix(string(line), "- "); ok {
			out = append(out, unquote(name))
		}
	}
	return out
}

func unquote(v string) string { return strings.Trim(strings.TrimSpace(v), `"`) }
