package migrate

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// While a worker holds a job the mover waits for it; progress lines keep coming on time
// meanwhile and say what it waits for, naming the job (following, where workers on the old
// server hold jobs all the time, only counting them: a scan would delay new jobs).
func TestProgressLinesComeWhileWaitingForHeldJobs(t *testing.T) {
	const interval, hold = 100 * time.Millisecond, 2 * time.Second
	bin := gatewaytest.DebianBeanstalkd(t)
	tests := []struct {
		name    string
		follow  bool
		waiting string // what the lines during the wait say; %d is the held job's id
	}{
		{name: "until every job has moved", waiting: `waiting_for="1 job reserved at the source by other clients (moved once released): id %d in held"`},
		{name: "following", follow: true, waiting: `waiting_for="1 job reserved at the source by other clients (moved once released)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := gatewaytest.StartBeanstalkd(t, bin, 0)
			c := testConn(t, addr)
			put(t, c, "held", 0, 0, 60, "first")
			held := put(t, c, "held", 5, 0, 60, "held")
			w := testConn(t, addr)
			must(t, w, "WATCHING", "watch held")
			must(t, w, "RESERVED", "reserve-job %d", held)
			start := time.Now() // the hold's start: the run cannot end before it is over
			time.AfterFunc(hold, func() {
				w.Sendf("release %d 5 0", held)
				_ = w.Flush()
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.follow {
				time.AfterFunc(hold+time.Second, cancel)
			}

			var logs gatewaytest.SyncBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			src, err := OpenSource(ctx, "beanstalk://"+addr, "", tt.follow, log)
			require.NoError(t, err)
			defer src.Close()
			dst := NewStoreDest(memory.New(memory.Options{}))
			rep, err := Run(ctx, src, dst, Options{Log: log, Progress: NewLines(log, 2, interval)})
			require.NoError(t, err)
			require.Equal(t, uint64(2), rep.Moved)
			require.GreaterOrEqual(t, time.Since(start), hold, "the run waited for the held job")

			want := tt.waiting
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, held)
			}
			var waiting int
			var last time.Time
			var gaps []time.Duration
			re := regexp.MustCompile(`^time=(\S+) .*msg="migrate: progress"`)
			for _, l := range strings.Split(logs.String(), "\n") {
				m := re.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				at, err := time.Parse(time.RFC3339Nano, m[1])
				require.NoError(t, err)
				if !last.IsZero() {
					gaps = append(gaps, at.Sub(last))
				}
				last = at
				if strings.Contains(l, "reserved at the source") {
					require.Contains(t, l, want)
					waiting++
				}
			}
			// About hold/interval lines; a loaded machine may delay some, but never go silent.
			require.GreaterOrEqual(t, waiting, int(hold/interval)/3, logs.String())
			for _, g := range gaps {
				require.Less(t, g, 10*interval, "a gap between progress lines:\n%s", logs.String())
			}
		})
	}
}

// The report names the jobs a run leaves at the source: by id, tube and state, and why.
func TestReportNamesTheJobsLeftAtTheSource(t *testing.T) {
	bin := gatewaytest.DebianBeanstalkd(t)
	tests := []struct {
		name  string
		tubes string
		stop  time.Duration // stop the run this long after its start (0: it runs to its end)
		want  []string      // in the printed report
	}{
		{name: "nothing left", want: []string{"left at source:   none in the tubes moved"}},
		{name: "a held job, the run stopped while waiting for it", stop: 1500 * time.Millisecond,
			want: []string{"left at source:   1 job in the tubes moved:", "(tube held, reserved, TTR ends in ", "reserved by another client: it moves once released"}},
		{name: "tubes not selected", tubes: "h*", stop: 1500 * time.Millisecond,
			want: []string{"(tube held, reserved", "not selected:     other (2 jobs): not matched by --tubes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := gatewaytest.StartBeanstalkd(t, bin, 0)
			c := testConn(t, addr)
			put(t, c, "other", 0, 0, 60, "o1")
			put(t, c, "other", 0, 0, 60, "o2")
			var held uint64
			if tt.stop > 0 {
				held = put(t, c, "held", 0, 0, 60, "h")
				w := testConn(t, addr)
				must(t, w, "RESERVED", "reserve-job %d", held)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.stop > 0 {
				time.AfterFunc(tt.stop, cancel)
			}
			src, err := OpenSource(ctx, "beanstalk://"+addr, tt.tubes, false, testLog(t))
			require.NoError(t, err)
			defer src.Close()
			dst := NewStoreDest(memory.New(memory.Options{}))
			rep, err := Run(ctx, src, dst, Options{Log: testLog(t)})
			require.NoError(t, err)
			require.NoError(t, rep.LeftErr)
			var out bytes.Buffer
			rep.Print(&out)
			for _, w := range tt.want {
				require.Contains(t, out.String(), w)
			}
			if held != 0 {
				require.Contains(t, out.String(), fmt.Sprintf("    id %d (tube held, reserved", held))
				require.Equal(t, 1, rep.Left.Count)
				require.Equal(t, "reserved", rep.Left.Jobs[0].State)
			}
		})
	}
}

// Which --compat answers a source's clients as it did, from its stats version.
func TestCompatFromTheSourceVersion(t *testing.T) {
	tests := []struct {
		version, flag, says string
	}{
		{"1.12", "1.12", "serve beangate with --compat 1.12"},
		{"1.10", "1.12", "serve beangate with --compat 1.12"},
		{"1.13", "1.13", "the default --compat 1.13 answers as it does"},
		{"1.14.2", "1.13", "the default --compat 1.13"},
		{"", "", "does not say which beanstalkd"},
		{"unknown", "", `reports version "unknown"`},
	}
	for _, tt := range tests {
		flag, why := Compat(tt.version)
		require.Equal(t, tt.flag, flag, tt.version)
		require.Contains(t, why, tt.says, tt.version)
	}
	// A live server says which it is: Debian's package is 1.12.
	addr := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	src, err := OpenSource(context.Background(), "beanstalk://"+addr, "", false, testLog(t))
	require.NoError(t, err)
	defer src.Close()
	require.Equal(t, "1.12", src.Version())
	flag, _ := Compat(src.Version())
	require.Equal(t, "1.12", flag)
}
