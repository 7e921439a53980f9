package gateway

import (
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
)

// yamlDoc builds the small YAML documents of stats and list replies, byte for byte as
// beanstalkd 1.13 prints them: "---\n", then "key: value\n" lines; strings are double-quoted.
type yamlDoc []byte

func newYAML() yamlDoc { return append(make(yamlDoc, 0, 1024), "---\n"...) }

func (y yamlDoc) uint(key string, v uint64) yamlDoc {
	y = append(y, key...)
	y = append(y, ": "...)
	y = strconv.AppendUint(y, v, 10)
	return append(y, '\n')
}

func (y yamlDoc) int(key string, v int64) yamlDoc {
	y = append(y, key...)
	y = append(y, ": "...)
	y = strconv.AppendInt(y, v, 10)
	return append(y, '\n')
}

// seconds prints a duration as whole seconds, truncated as beanstalkd does.
func (y yamlDoc) seconds(key string, d time.Duration) yamlDoc {
	return y.int(key, int64(d/time.Second))
}

func (y yamlDoc) quoted(key, v string) yamlDoc {
	y = append(y, key...)
	y = append(y, ": \""...)
	y = append(y, v...)
	return append(y, "\"\n"...)
}

func (y yamlDoc) plain(key, v string) yamlDoc {
	y = append(y, key...)
	y = append(y, ": "...)
	y = append(y, v...)
	return append(y, '\n')
}

func (y yamlDoc) bool(key string, v bool) yamlDoc {
	return y.plain(key, strconv.FormatBool(v))
}

// yamlList is the list-tubes form: "---\n- a\n- b\n"; names are never quoted.
func yamlList(names []string) []byte {
	y := append(make([]byte, 0, 64), "---\n"...)
	for _, n := range names {
		y = append(y, "- "...)
		y = append(y, n...)
		y = append(y, '\n')
	}
	return y
}

// name prints a tube name: quoted as 1.13 does, plain as 1.12 did.
func (y yamlDoc) name(key, v string, v112 bool) yamlDoc {
	if v112 {
		return y.plain(key, v)
	}
	return y.quoted(key, v)
}

func jobStatsYAML(js *backend.JobStats, v112 bool) []byte {
	return newYAML().
		uint("id", js.ID).
		name("tube", js.Tube, v112).
		plain("state", js.State.String()).
		uint("pri", uint64(js.Priority)).
		seconds("age", js.Age).
		seconds("delay", js.Delay).
		seconds("ttr", js.TTR).
		seconds("time-left", js.TimeLeft).
		uint("file", js.File).
		uint("reserves", uint64(js.Reserves)).
		uint("timeouts", uint64(js.Timeouts)).
		uint("releases", uint64(js.Releases)).
		uint("buries", uint64(js.Buries)).
		uint("kicks", uint64(js.Kicks))
}

func tubeStatsYAML(ts *backend.TubeStats, waiting int64, v112 bool) []byte {
	return newYAML().
		name("name", ts.Name, v112).
		uint("current-jobs-urgent", ts.UrgentJobs).
		uint("current-jobs-ready", ts.ReadyJobs).
		uint("current-jobs-reserved", ts.ReservedJobs).
		uint("current-jobs-delayed", ts.DelayedJobs).
		uint("current-jobs-buried", ts.BuriedJobs).
		uint("total-jobs", ts.TotalJobs).
		uint("current-using", ts.Using).
		uint("current-watching", ts.Watching).
		int("current-waiting", waiting).
		uint("cmd-delete", ts.CmdDelete).
		uint("cmd-pause-tube", ts.CmdPauseTube).
		seconds("pause", ts.Pause).
		seconds("pause-time-left", ts.PauseTimeLeft)
}
