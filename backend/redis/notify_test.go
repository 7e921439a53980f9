package redis_test

import (
	"context"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/internal/clocktest"
)

// adminClient is a client of the shared Redis, closed when the test ends.
func adminClient(t *testing.T) *goredis.Client {
	t.Helper()
	c, err := testClient(redisURL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newNotifyTest opens a Backend (1 s lease) on a fresh namespace, and an admin client to look
// at its keys.
func newNotifyTest(t *testing.T) (prefix string, b backend.Backend, admin *goredis.Client) {
	t.Helper()
	prefix = newPrefix(t)
	return prefix, newBackend(t, prefix, nil, time.Second), adminClient(t)
}

// waitingCount is a tube's count of reserves waiting on it (lib.lua's notify).
func waitingCount(t *testing.T, c *goredis.Client, prefix, tube string) int64 {
	t.Helper()
	n, err := c.HGet(context.Background(), "{"+prefix+"}:t:"+tube, "wt").Int64()
	if err == goredis.Nil {
		return 0
	}
	require.NoError(t, err)
	return n
}

// countedWaitThenCancel starts a reserve that waits on tube for session s, checks that the tube
// counts it as waiting, then cancels it.
func countedWaitThenCancel(t *testing.T, b backend.Backend, admin *goredis.Client, prefix string, s backend.SessionID, tube string) {
	t.Helper()
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.Reserve(rctx, backend.ReserveParams{Session: s, Tubes: []string{tube}, Timeout: -1})
	}()
	require.Eventually(t, func() bool { return waitingCount(t, admin, prefix, tube) == 1 },
		5*time.Second, 5*time.Millisecond)
	cancel()
	<-done
}

// A job is published only when a reserve waits on its tube, and a reserve's wait is uncounted
// however it ends (job, timeout, session end).
func TestPublishOnlyWhenAReserveWaits(t *testing.T) {
	t.Parallel()
	prefix, b, admin := newNotifyTest(t)
	ctx := context.Background()
	sub := admin.Subscribe(ctx, "{"+prefix+"}:ready")
	defer sub.Close()
	_, err := sub.Receive(ctx)
	require.NoError(t, err)

	put := func(tube string) {
		_, err := b.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
	}
	s := backend.SessionID("notify.1")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	require.NoError(t, b.WatchTube(ctx, s, "b"))

	put("a") // nobody waits on a: no publish
	type reserved struct {
		job *backend.Job
		err error
	}
	got := make(chan reserved, 1)
	go func() { // require's FailNow must not run here: the test would hang on <-got instead
		j, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"b"}, Timeout: -1})
		got <- reserved{j, err}
	}()
	require.Eventually(t, func() bool { return waitingCount(t, admin, prefix, "b") == 1 },
		5*time.Second, 5*time.Millisecond)
	put("b")
	m, err := sub.ReceiveMessage(ctx)
	require.NoError(t, err)
	require.Equal(t, "b", m.Payload, "the first publish is b's: a had no waiter")
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, "b", r.job.Tube)
	require.Zero(t, waitingCount(t, admin, prefix, "b"), "a reserve that got a job is uncounted")

	_, err = b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"b"}, Timeout: 50 * time.Millisecond})
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.Zero(t, waitingCount(t, admin, prefix, "b"), "a reserve that timed out is uncounted")

	countedWaitThenCancel(t, b, admin, prefix, s, "b")
	require.NoError(t, b.EndSession(ctx, s))
	require.Zero(t, waitingCount(t, admin, prefix, "b"), "ending the session uncounts its wait")
}

// Several reserves waiting on one tube of one gateway each get one of several jobs made ready
// at once by one kick, which publishes once and so wakes only one of them: the wake-up must be
// passed on. The safety poll is off (an hour) and the reserves are given up by their context,
// not a reserve timeout (whose last attempt would find a job anyway), so only wake-ups deliver.
func TestWakeOnePassesTheWakeUpOn(t *testing.T) {
	t.Parallel()
	prefix, b, admin := newNotifyTest(t)
	beanredis.SetSafetyPoll(b.(*beanredis.Backend), time.Hour)
	ctx := context.Background()
	const n = 5
	buried := backend.SessionID("wake.buried")
	require.NoError(t, b.BeginSession(ctx, buried, backend.SessionInfo{}))
	for range n {
		id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		_, err = b.ReserveJob(ctx, buried, id)
		require.NoError(t, err)
		require.NoError(t, b.Bury(ctx, buried, id, 0))
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got := startWaiting(rctx, t, b, "wake", n)
	require.Eventually(t, func() bool { return waitingCount(t, admin, prefix, "default") == n },
		5*time.Second, 5*time.Millisecond)
	kicked, err := b.Kick(ctx, "default", n)
	require.NoError(t, err)
	require.Equal(t, n, int(kicked))
	for range n {
		require.NoError(t, <-got, "a wake-up was lost: a reserve waited until its context ended")
	}
}

// startWaiting starts n reserves waiting on tube default until rctx ends, each in a session of
// its own (name.a, name.b, …), and returns where their outcomes arrive.
func startWaiting(rctx context.Context, t *testing.T, b backend.Backend, name string, n int) <-chan error {
	t.Helper()
	got := make(chan error, n)
	for i := range n {
		s := backend.SessionID(name + "." + string(rune('a'+i)))
		require.NoError(t, b.BeginSession(context.Background(), s, backend.SessionInfo{}))
		go func() {
			_, err := b.Reserve(rctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}, Timeout: -1})
			got <- err
		}()
	}
	return got
}

// A wait count left behind (the reserve gave up without a last try) does not resurrect a tube
// dropped since: uncounting skips tubes that no longer exist.
func TestStaleWaitCountOfADroppedTube(t *testing.T) {
	t.Parallel()
	prefix, b, admin := newNotifyTest(t)
	ctx := context.Background()
	s := backend.SessionID("stale.1")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	require.NoError(t, b.WatchTube(ctx, s, "x"))
	countedWaitThenCancel(t, b, admin, prefix, s, "x")
	require.NoError(t, b.IgnoreTube(ctx, s, "x")) // x has no job and no reference left: dropped
	n, err := admin.Exists(ctx, "{"+prefix+"}:t:x").Result()
	require.NoError(t, err)
	require.Zero(t, n, "tube x dropped")
	require.NoError(t, b.EndSession(ctx, s))
	n, err = admin.Exists(ctx, "{"+prefix+"}:t:x").Result()
	require.NoError(t, err)
	require.Zero(t, n, "ending the session must not recreate x's hash")
}

// newDueTimeTest is newNotifyTest with a fake clock, publishes dropped and the safety poll off
// (an hour): only due times and wake-ups passed on between waiters deliver, so a lost one
// leaves a reserve waiting until its context ends.
func newDueTimeTest(t *testing.T) (prefix string, b *beanredis.Backend, admin *goredis.Client, clock *clocktest.Fake) {
	t.Helper()
	clock = clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
	prefix = newPrefix(t)
	b = newBackend(t, prefix, clock, time.Second)
	beanredis.SetSafetyPoll(b, time.Hour)
	beanredis.DropPublishes(b)
	return prefix, b, adminClient(t), clock
}

// Reserves waiting for the same due time are not all woken: one per tube is, and a reserve that
// is not must still get a job due later. A reserve that leaves with the job it was woken for
// hands the watch over the tube's due times to one that was passed over.
func TestDueTimesLoseNoWakeUp(t *testing.T) {
	t.Parallel()
	prefix, b, admin, clock := newDueTimeTest(t)
	ctx := context.Background()

	// Two jobs due in 1 s, one in 2 s, one in 3 s; one reserve more than jobs.
	due := []time.Duration{time.Second, time.Second, 2 * time.Second, 3 * time.Second}
	for _, d := range due {
		_, err := b.Put(ctx, backend.PutParams{Tube: "default", Delay: d, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
	}
	n := len(due) + 1
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got := startWaiting(rctx, t, b, "due", n)
	require.Eventually(t, func() bool { return waitingCount(t, admin, prefix, "default") == int64(n) },
		5*time.Second, 5*time.Millisecond)
	for _, jobs := range []int{2, 1, 1} {
		clock.Advance(time.Second)
		for range jobs {
			select {
			case err := <-got:
				require.NoError(t, err)
			case <-time.After(5 * time.Second):
				// Taken while the reserves still wait, so that a failure says which of them
				// should have been woken (idle: passed over; armed: for which due time).
				t.Fatalf("a wake-up was lost: no reserve got the job due at %v; waiters: %s",
					clock.Now().UnixMilli(), beanredis.WaiterStates(b))
			}
		}
	}
	cancel()
	require.ErrorIs(t, <-got, context.Canceled, "the reserve left over had no job to get")
}

// A waiting reserve's timer is set for the time its try reported, however far the clock moved
// while it was being set: on a fake clock, counting "from now" twice (once to work out how long
// to wait, once when setting the timer) put it a whole step late when the clock advanced in
// between, and the reserve waited through the step it was due in. Here the clock advances by
// exactly the wait just before each reserve sets its timer: it is due at once.
func TestTimerSetWhileTheClockAdvancesIsNotLate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// setup prepares session s and returns its reserve's timeout; what the reserve waits for
		// is due in 1 s.
		setup   func(t *testing.T, b *beanredis.Backend, s backend.SessionID) (timeout time.Duration)
		wantErr error // nil: a job
	}{
		{"a delayed job's due time", func(t *testing.T, b *beanredis.Backend, s backend.SessionID) time.Duration {
			_, err := b.Put(ctx, backend.PutParams{Tube: "default", Delay: time.Second, TTR: time.Minute, Body: []byte("x")})
			require.NoError(t, err)
			return -1
		}, nil},
		{"its session's DEADLINE_SOON", func(t *testing.T, b *beanredis.Backend, s backend.SessionID) time.Duration {
			// Held in a tube the reserve does not watch: no due time of its tubes is set.
			_, err := b.Put(ctx, backend.PutParams{Tube: "held", TTR: 2 * time.Second, Body: []byte("x")})
			require.NoError(t, err)
			_, err = b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"held"}})
			require.NoError(t, err) // its margin starts in 1 s
			return -1
		}, backend.ErrDeadlineSoon},
		{"its timeout", func(t *testing.T, b *beanredis.Backend, s backend.SessionID) time.Duration {
			return time.Second
		}, backend.ErrTimedOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, b, _, clock := newDueTimeTest(t)
			s := backend.SessionID("late.1")
			require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
			timeout := tt.setup(t, b, s)
			var once sync.Once
			beanredis.SetBeforeTimer(b, func() { once.Do(func() { clock.Advance(time.Second) }) })
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			j, err := b.Reserve(rctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}, Timeout: timeout})
			require.NotErrorIs(t, err, context.DeadlineExceeded, "the timer was set a step late")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, j)
		})
	}
}

// A reserve passed over for a due time of its tubes (another waiter of them was woken) still
// wakes for a time that is its own: its session's DEADLINE_SOON. Here five reserves wait on a
// paused tube; the pause end wakes one of them, and the one with a reservation must still
// answer DEADLINE_SOON when its margin starts. (Without its own timer it fails whenever it is
// not the one woken: four times in five.)
func TestPassedOverReserveKeepsItsDeadlineSoon(t *testing.T) {
	t.Parallel()
	prefix, b, admin, clock := newDueTimeTest(t)
	ctx := context.Background()

	owner := backend.SessionID("soon.owner")
	require.NoError(t, b.BeginSession(ctx, owner, backend.SessionInfo{}))
	_, err := b.Put(ctx, backend.PutParams{Tube: "b", TTR: 3 * time.Second, Body: []byte("x")})
	require.NoError(t, err)
	_, err = b.Reserve(ctx, backend.ReserveParams{Session: owner, Tubes: []string{"b"}})
	require.NoError(t, err) // its margin starts in 2 s
	require.NoError(t, b.WatchTube(ctx, owner, "a"))
	require.NoError(t, b.PauseTube(ctx, "a", time.Second))

	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	soon := make(chan error, 1)
	go func() {
		_, err := b.Reserve(rctx, backend.ReserveParams{Session: owner, Tubes: []string{"a"}, Timeout: -1})
		soon <- err
	}()
	for i := range 4 {
		s := backend.SessionID("soon.other." + string(rune('a'+i)))
		require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
		go func() { _, _ = b.Reserve(rctx, backend.ReserveParams{Session: s, Tubes: []string{"a"}, Timeout: -1}) }()
	}
	require.Eventually(t, func() bool { return waitingCount(t, admin, prefix, "a") == 5 },
		5*time.Second, 5*time.Millisecond)
	clock.Advance(time.Second) // the pause ends: one reserve of a is woken, finds nothing
	clock.Advance(time.Second) // the owner's margin starts
	require.ErrorIs(t, <-soon, backend.ErrDeadlineSoon, "the owner's own wake-up was lost")
}

// A waiting reserve knows only the earliest due time it was told at its last try. Whatever makes
// a job due sooner than that — a delayed put or release due before the tube's other delayed
// jobs, a pause cut short — must tell it: with the safety poll off, nothing else delivers the job
// here before its context ends (the fake clock never nears the hour the reserve was told).
func TestSoonerDueTimeReachesAWaitingReserve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	put := func(t *testing.T, b *beanredis.Backend, delay time.Duration) uint64 {
		id, err := b.Put(ctx, backend.PutParams{Tube: "default", Delay: delay, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		return id
	}
	tests := []struct {
		name   string
		before func(t *testing.T, b *beanredis.Backend) (sooner func()) // the reserve then waits an hour
	}{
		{"a delayed put due first", func(t *testing.T, b *beanredis.Backend) func() {
			put(t, b, time.Hour)
			return func() { put(t, b, time.Second) }
		}},
		{"a delayed release due first", func(t *testing.T, b *beanredis.Backend) func() {
			put(t, b, time.Hour)
			holder := backend.SessionID("sooner.holder")
			require.NoError(t, b.BeginSession(ctx, holder, backend.SessionInfo{}))
			id := put(t, b, 0)
			_, err := b.ReserveJob(ctx, holder, id)
			require.NoError(t, err)
			return func() {
				require.NoError(t, b.Release(ctx, backend.ReleaseParams{Session: holder, ID: id, Delay: time.Second}))
			}
		}},
		{"a pause cut short", func(t *testing.T, b *beanredis.Backend) func() {
			put(t, b, 0)
			require.NoError(t, b.PauseTube(ctx, "default", time.Hour))
			return func() { require.NoError(t, b.PauseTube(ctx, "default", time.Second)) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
			prefix := newPrefix(t)
			b := newBackend(t, prefix, clock, time.Second)
			beanredis.SetSafetyPoll(b, time.Hour)
			admin := adminClient(t)
			sooner := tt.before(t, b)
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			got := startWaiting(rctx, t, b, "sooner", 1)
			require.Eventually(t, func() bool { return waitingCount(t, admin, prefix, "default") == 1 },
				5*time.Second, 5*time.Millisecond)
			sooner()
			// The reserve re-arms for the sooner time when the news reaches it.
			err, ok := clocktest.AdvanceUntil(clock, got, time.Second, 5, 500*time.Millisecond)
			require.True(t, ok, "the waiting reserve was not told of the sooner due time")
			require.NoError(t, err)
		})
	}
}
