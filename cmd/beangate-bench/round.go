package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// options are the knobs shared by every scenario.
type options struct {
	Conns    int           `json:"conns"`
	Pipeline int           `json:"pipeline"`
	Body     int           `json:"body"`
	Tubes    int           `json:"tubes"`
	Duration time.Duration `json:"duration_ns"`
	Jobs     int           `json:"jobs"`        // job count: put stops early at it, drain preloads it
	Backlog  int           `json:"backlog"`     // cycle: producers pause when this many jobs wait
	Interval time.Duration `json:"interval_ns"` // reserve-wait, delayed: gap between trickled puts
	// open-loop: the offered rate over every producer, the producers, the warm-up before the
	// measured window, and how long a worker holds each job before deleting it.
	Rate      int           `json:"rate"`
	Producers int           `json:"producers"`
	Warmup    time.Duration `json:"warmup_ns"`
	Handler   time.Duration `json:"handler_ns"`
}

// target is one server under test. Addr may name two gateways of one shared store as "A+B":
// producers connect to A and consumers to B, so every job crosses from one gateway to the other.
type target struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	PID  int    `json:"pid,omitempty"`
	// Store is the URL of the store behind a gateway (-store); never printed, it may hold a password.
	Store string `json:"-"`
}

// primary is the address for producers and for everything that is not a consumer.
func (t target) primary() string {
	first, _, _ := strings.Cut(t.Addr, "+")
	return first
}

// consumer is the address consumers connect to: the last of "A+B", or the only one.
func (t target) consumer() string {
	return t.Addr[strings.LastIndex(t.Addr, "+")+1:]
}

// Benchmark jobs: TTR far beyond any round so a slow consumer never causes a legitimate
// re-delivery that the exactly-once check would report.
const (
	jobPriority = 1024
	jobTTR      = 3600
)

// round is the state of one measurement of one scenario against one server. Every round gets
// fresh random tube names so leftovers of an earlier round can never be counted.
type round struct {
	opts   options
	target target
	tubes  []string
	ledger *ledger
	base   time.Time // body timestamps are nanoseconds since base
	server *serverState

	mu      sync.Mutex
	conns   []*beanstalk.Conn
	err     error
	failed  chan struct{}
	failing sync.Once
}

// serverState is what rounds learn about one server and later rounds of it reuse.
type serverState struct {
	// rssBaseline is the server's RSS before the first conns round, in KiB: freed memory is
	// kept by the allocator and reused, so later rounds measure against the first baseline.
	rssBaseline float64
}

func newRound(opts options, t target, server *serverState) *round {
	prefix := "bench-" + randomHex(6)
	tubes := make([]string, max(opts.Tubes, 1))
	for i := range tubes {
		tubes[i] = prefix + "-" + itoa(i)
	}
	return &round{opts: opts, target: t, tubes: tubes, ledger: newLedger(), base: time.Now(),
		server: server, failed: make(chan struct{})}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dial connects to a server, giving up after 10 s.
func dial(addr string) (*beanstalk.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return beanstalk.Dial(ctx, addr)
}

// dial opens a connection to the primary address that the round closes when it fails or ends.
func (r *round) dial() (*beanstalk.Conn, error) {
	return r.dialAddr(r.target.primary())
}

// dialAddr is dial to a given address of the target.
func (r *round) dialAddr(addr string) (*beanstalk.Conn, error) {
	c, err := dial(addr)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.conns = append(r.conns, c)
	r.mu.Unlock()
	return c, nil
}

// fail records the round's first error and closes every connection so blocked workers return.
func (r *round) fail(err error) {
	if err == nil {
		return
	}
	r.failing.Do(func() {
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
		close(r.failed)
		r.closeAll()
	})
}

func (r *round) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *round) closeAll() {
	r.mu.Lock()
	conns := r.conns
	r.conns = nil
	r.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// sleep waits for d unless the round fails first; it reports whether the round is still healthy.
func (r *round) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.failed:
		return false
	}
}

// isClosed reports whether err comes from a connection the harness closed on purpose.
func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
