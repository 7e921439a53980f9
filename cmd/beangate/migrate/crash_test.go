package migrate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	beanpg "github.com/beangate/beangate/backend/postgres"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestMoverProcess is the mover run as a child process by the crash test (it does nothing
// otherwise): MIGRATE_FROM to MIGRATE_TO (binlog:DIR, or a Redis or Postgres URL).
func TestMoverProcess(t *testing.T) {
	from, to := os.Getenv("MIGRATE_FROM"), os.Getenv("MIGRATE_TO")
	if from == "" {
		return
	}
	ctx := context.Background()
	src, err := OpenSource(ctx, from, "", false, testLog(t))
	require.NoError(t, err)
	var b backend.Backend
	switch to[:5] {
	case "binlo":
		b, err = memory.Open(memory.Options{Binlog: &binlog.Options{Dir: to[len("binlog:"):]}})
	case "redis":
		var o beanredis.Options
		if o, err = beanredis.ParseURL(to); err == nil {
			b, err = beanredis.New(ctx, o)
		}
	default:
		var o beanpg.Options
		if o, err = beanpg.ParseURL(to); err == nil {
			b, err = beanpg.New(ctx, o)
		}
	}
	require.NoError(t, err)
	dst := NewStoreDest(b)
	_, err = Run(ctx, src, dst, Options{Batch: 7, Log: testLog(t)})
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	os.Exit(0)
}

// The mover is killed (SIGKILL) at random moments 15 times per store, then run to the end:
// every job of the source is in the store exactly once, and the source is empty.
func TestKilledMoverLosesAndDoublesNothing(t *testing.T) {
	const jobs = 3000
	bin := gatewaytest.DebianBeanstalkd(t)
	type target struct {
		name string
		to   string
		open func(t testing.TB) backend.Backend
	}
	bl := binlogStore(t)
	rs := redisStore(t)
	pg := postgresStore(t)
	targets := []target{
		{"binlog", "binlog:" + bl.dir, bl.open},
		{"redis", rs.url, rs.open},
		{"postgres", pg.url, pg.open},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			addr := gatewaytest.StartBeanstalkd(t, bin, 0)
			c := testConn(t, addr)
			bodies := map[string]bool{}
			for i := range jobs {
				tube := fmt.Sprintf("t%d", i%3)
				body := fmt.Sprintf("job-%d", i)
				delay := 0
				if i%10 == 0 {
					delay = 3600
				}
				id := put(t, c, tube, i%5, delay, 60, body)
				if i%7 == 0 {
					must(t, c, "RESERVED", "reserve-job %d", id)
					must(t, c, "BURIED", "bury %d 1", id)
				}
				bodies[body] = true
			}
			env := append(os.Environ(), "MIGRATE_FROM=beanstalk://"+addr, "MIGRATE_TO="+tg.to)
			kills := 0
			for attempt := 0; ; attempt++ {
				cmd := exec.Command(os.Args[0], "-test.run=^TestMoverProcess$")
				cmd.Env = env
				out := &limitedBuffer{}
				cmd.Stdout, cmd.Stderr = out, out
				require.NoError(t, cmd.Start())
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				if attempt < 15 {
					select {
					case err := <-done:
						require.NoError(t, err, "mover failed: %s", out)
						goto finished
					case <-time.After(time.Duration(10+rand.IntN(60)) * time.Millisecond):
						_ = cmd.Process.Signal(syscall.SIGKILL)
						<-done
						kills++
						continue
					}
				}
				select {
				case err := <-done:
					require.NoError(t, err, "mover failed: %s", out)
					goto finished
				case <-time.After(30 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("the last run did not finish: %s", out)
				}
			}
		finished:
			t.Logf("%d kills", kills)
			requireDrained(t, addr)
			b := tg.open(t)
			defer b.Close()
			ctx := context.Background()
			seen := map[string]int{}
			st, err := b.Stats(ctx)
			require.NoError(t, err)
			require.Equal(t, uint64(len(bodies)), st.ReadyJobs+st.DelayedJobs+st.BuriedJobs, "jobs in the store")
			for id := uint64(1); id <= jobs; id++ {
				j, err := b.Peek(ctx, id)
				require.NoError(t, err, "job %d (ids are kept)", id)
				seen[string(j.Body)]++
			}
			for body := range bodies {
				require.Equal(t, 1, seen[body], body)
			}
		})
	}
}

// limitedBuffer keeps the first 64 KiB a child writes.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 1<<16 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
