package redis_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// outcomeTB records whether a test helper failed or skipped the test it was given. Both end
// the goroutine, as testing.T's FailNow and SkipNow do.
type outcomeTB struct {
	testing.TB
	failed, skipped bool
}

func (o *outcomeTB) Helper()               {}
func (o *outcomeTB) Fatalf(string, ...any) { o.failed = true; runtime.Goexit() }
func (o *outcomeTB) Skipf(string, ...any)  { o.skipped = true; runtime.Goexit() }
func (o *outcomeTB) Errorf(string, ...any) { o.failed = true }
func (o *outcomeTB) FailNow()              { o.failed = true; runtime.Goexit() }
func (o *outcomeTB) Logf(string, ...any)   {}
func (o *outcomeTB) Cleanup(func())        {}

// In CI (CI=true) a Redis test that cannot reach Redis fails; it never skips. Elsewhere it
// skips, so that `go test ./...` works without a Redis. (Not parallel: it sets the environment.)
func TestUnreachableRedisFailsInCIAndSkipsElsewhere(t *testing.T) {
	requireRedis(t) // the reachable case below needs the real one
	reachable := redisURL()
	tests := []struct {
		name, url, ci   string
		failed, skipped bool
	}{
		{name: "unreachable in CI fails", url: "redis://127.0.0.1:1/0", ci: "true", failed: true},
		{name: "unreachable elsewhere skips", url: "redis://127.0.0.1:1/0", ci: "", skipped: true},
		{name: "reachable in CI runs", url: reachable, ci: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("REDIS_URL", tt.url)
			t.Setenv("CI", tt.ci)
			o := &outcomeTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				requireRedis(o)
			}()
			<-done
			require.Equal(t, tt.failed, o.failed, "failed")
			require.Equal(t, tt.skipped, o.skipped, "skipped")
		})
	}
}
