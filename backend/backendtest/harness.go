package backendtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

const (
	// watchdog bounds every backend call and every wait for an outcome, in real time.
	watchdog = 5 * time.Second
	// settle is the real moment given to a reserve to start waiting before the case goes on.
	// Cases where a job goes to a waiting reserve (a session's end hands its jobs to waiters in
	// reservation order) need the reserve to be waiting by then: 10 ms was once too little in a
	// full CI run under the race detector on two loaded cores, and the waiter, not yet waiting,
	// took the better job as any later reserve would.
	settle = 50 * time.Millisecond
	// forever is a reserve timeout in fake time that no case ever reaches.
	forever = 1000 * time.Hour
)

// harness is one case's world: its backend, its clock and helpers that fail the case on any
// unexpected error.
type harness struct {
	*testing.T
	b        backend.Backend
	clock    *clocktest.Fake
	sessions int
	process  string // sessions are "<process>.<n>"; "suite" unless set

	restartWith Restart // set by RunRestarts
}

func newHarness(t *testing.T, newBackend NewBackend, realTime bool) *harness {
	if realTime {
		return &harness{T: t, b: newBackend(t, nil)}
	}
	clock := clocktest.NewFake(Epoch)
	return &harness{T: t, b: newBackend(t, clock), clock: clock}
}

// ctx returns a context that ends after the watchdog period.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	h.Cleanup(cancel)
	return ctx
}

func (h *harness) advance(d time.Duration) { h.clock.Advance(d) }

// session begins a new session, using and watching default.
func (h *harness) session() *client {
	h.Helper()
	h.sessions++
	process := h.process
	if process == "" {
		process = "suite"
	}
	c := &client{h: h, id: backend.SessionID(fmt.Sprintf("%s.%d", process, h.sessions)), used: backend.DefaultTube, watched: []string{backend.DefaultTube}}
	require.NoError(h, h.b.BeginSession(h.ctx(), c.id, c.info()))
	return c
}

func (h *harness) jobStats(id uint64) *backend.JobStats {
	h.Helper()
	st, err := h.b.JobStats(h.ctx(), id)
	require.NoError(h, err)
	st.File = 0 // where a binlog keeps the job is the store's own business
	return st
}

func (h *harness) tubeStats(tube string) *backend.TubeStats {
	h.Helper()
	st, err := h.b.TubeStats(h.ctx(), tube)
	require.NoError(h, err)
	return st
}

func (h *harness) stats() *backend.Stats {
	h.Helper()
	st, err := h.b.Stats(h.ctx())
	require.NoError(h, err)
	st.Binlog = backend.BinlogStats{} // a binlog's figures are the store's own business
	return st
}

func (h *harness) tubes() []string {
	h.Helper()
	names, err := h.b.ListTubes(h.ctx())
	require.NoError(h, err)
	return names
}

func (h *harness) requireState(id uint64, want backend.State) {
	h.Helper()
	require.Equal(h, want, h.jobStats(id).State, "state of job %d", id)
}

func (h *harness) requireTubeMissing(tube string) {
	h.Helper()
	_, err := h.b.TubeStats(h.ctx(), tube)
	require.ErrorIs(h, err, backend.ErrNotFound, "tube %q should not exist", tube)
	require.NotContains(h, h.tubes(), tube)
}

func (h *harness) kick(tube string, bound uint64) uint64 {
	h.Helper()
	n, err := h.b.Kick(h.ctx(), tube, bound)
	require.NoError(h, err)
	return n
}

func (h *harness) pause(tube string, d time.Duration) {
	h.Helper()
	require.NoError(h, h.b.PauseTube(h.ctx(), tube, d))
}

// client is one session with the gateway-side bookkeeping (used tube, watch list) the backend
// expects its caller to keep.
type client struct {
	h       *harness
	id      backend.SessionID
	used    string
	watched []string
}

// info is what the client's session registers: an address of its own, for the histories.
func (c *client) info() backend.SessionInfo {
	return backend.SessionInfo{Addr: "192.0.2.1:" + strings.TrimPrefix(string(c.id), c.id.Process()+".")}
}

func (c *client) use(tube string) *client {
	c.h.Helper()
	require.NoError(c.h, c.h.b.UseTube(c.h.ctx(), c.id, tube))
	c.used = tube
	return c
}

func (c *client) watch(tube string) *client {
	c.h.Helper()
	require.NoError(c.h, c.h.b.WatchTube(c.h.ctx(), c.id, tube))
	for _, w := range c.watched {
		if w == tube {
			return c
		}
	}
	c.watched = append(c.watched, tube)
	return c
}

func (c *client) ignore(tube string) *client {
	c.h.Helper()
	require.NoError(c.h, c.h.b.IgnoreTube(c.h.ctx(), c.id, tube))
	for i, w := range c.watched {
		if w == tube {
			c.watched = append(c.watched[:i:i], c.watched[i+1:]...)
			break
		}
	}
	return c
}

func (c *client) end() {
	c.h.Helper()
	require.NoError(c.h, c.h.b.EndSession(c.h.ctx(), c.id))
}

// job describes a put; the zero value is a ready job with priority 0 and a TTR of 10 s.
type job struct {
	pri   uint32
	delay time.Duration
	ttr   time.Duration
	body  string
}

// put stores a job in the used tube.
func (c *client) put(j job) uint64 {
	c.h.Helper()
	if j.ttr == 0 {
		j.ttr = 10 * time.Second
	}
	if j.body == "" {
		j.body = "body"
	}
	id, err := c.h.b.Put(c.h.ctx(), backend.PutParams{Session: c.id, Tube: c.used, Priority: j.pri, Delay: j.delay, TTR: j.ttr, Body: []byte(j.body)})
	require.NoError(c.h, err)
	return id
}

func (c *client) reserveParams(timeout time.Duration) backend.ReserveParams {
	return backend.ReserveParams{Session: c.id, Tubes: append([]string(nil), c.watched...), Timeout: timeout}
}

// tryReserve reserves without waiting.
func (c *client) tryReserve() (*backend.Job, error) {
	return c.h.b.Reserve(c.h.ctx(), c.reserveParams(0))
}

// reserveNow reserves without waiting and requires a job.
func (c *client) reserveNow() *backend.Job {
	c.h.Helper()
	j, err := c.tryReserve()
	require.NoError(c.h, err)
	require.NotNil(c.h, j)
	return j
}

// reserveID reserves without waiting and requires job want.
func (c *client) reserveID(want uint64) {
	c.h.Helper()
	require.Equal(c.h, want, c.reserveNow().ID)
}

func (c *client) requireNothing(want error) {
	c.h.Helper()
	j, err := c.tryReserve()
	require.ErrorIs(c.h, err, want)
	require.Nil(c.h, j)
}

type reserveResult struct {
	job *backend.Job
	err error
}

// pending is a reserve running in its own goroutine.
type pending struct {
	h    *harness
	done chan reserveResult
}

// reserveAsync starts a waiting reserve and gives it a moment to begin waiting.
func (c *client) reserveAsync(timeout time.Duration) *pending {
	return c.reserveAsyncCtx(c.h.ctx(), timeout)
}

func (c *client) reserveAsyncCtx(ctx context.Context, timeout time.Duration) *pending {
	p := &pending{h: c.h, done: make(chan reserveResult, 1)}
	params := c.reserveParams(timeout)
	go func() {
		j, err := c.h.b.Reserve(ctx, params)
		p.done <- reserveResult{j, err}
	}()
	time.Sleep(settle)
	return p
}

// wait returns the reserve's outcome, failing the case if it does not come within the watchdog.
func (p *pending) wait() reserveResult {
	p.h.Helper()
	select {
	case r := <-p.done:
		return r
	case <-time.After(watchdog):
		p.h.Fatalf("reserve did not return within %v", watchdog)
		return reserveResult{}
	}
}

// requireJob waits for the reserve and requires job want.
func (p *pending) requireJob(want uint64) {
	p.h.Helper()
	r := p.wait()
	require.NoError(p.h, r.err)
	require.NotNil(p.h, r.job)
	require.Equal(p.h, want, r.job.ID)
}

// requireErr waits for the reserve and requires err.
func (p *pending) requireErr(want error) {
	p.h.Helper()
	r := p.wait()
	require.ErrorIs(p.h, r.err, want)
	require.Nil(p.h, r.job)
}

// requireWaiting checks that the reserve has not returned yet.
func (p *pending) requireWaiting() {
	p.h.Helper()
	select {
	case r := <-p.done:
		p.h.Fatalf("reserve returned early: job %v, err %v", r.job, r.err)
	case <-time.After(settle):
	}
}
