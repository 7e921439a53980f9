package postgres

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

func TestEmptyListsLookup(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	in := func(d time.Duration) *time.Time { at := t0.Add(d); return &at }
	cases := []struct {
		name    string
		next    *time.Time // the next due moment the statement gave
		after   func(e *emptyLists)
		gen     uint64 // at the lookup; the statement was sent at 7
		elapsed time.Duration
		ok      bool
	}{
		{name: "NothingHappened", gen: 7, elapsed: 10 * time.Millisecond, ok: true},
		{name: "AHintSince", gen: 8, elapsed: 10 * time.Millisecond},
		{name: "OlderThanThePoll", gen: 7, elapsed: pollInterval},
		{name: "ClockWentBack", gen: 7, elapsed: -time.Millisecond},
		{name: "BeforeTheNextDueMoment", next: in(time.Second), gen: 7, elapsed: 999 * time.Millisecond, ok: true},
		{name: "TheNextDueMomentCame", next: in(time.Second), gen: 7, elapsed: time.Second},
		{name: "AReservationDueEarlierSince", next: in(time.Minute), gen: 7, elapsed: time.Millisecond,
			after: func(e *emptyLists) { e.reservedUntil("b", in(time.Second)) }},
		{name: "AReservationDueLaterSince", next: in(time.Minute), gen: 7, elapsed: time.Millisecond, ok: true,
			after: func(e *emptyLists) { e.reservedUntil("b", in(time.Hour)) }},
		{name: "AReservationWithoutDueMomentSince", next: in(time.Minute), gen: 7, elapsed: time.Millisecond,
			after: func(e *emptyLists) { e.reservedUntil("b", nil) }},
		{name: "AnyReservationWhenNothingWasDue", gen: 7, elapsed: time.Millisecond,
			after: func(e *emptyLists) { e.reservedUntil("a", in(time.Hour)) }},
		{name: "AReservationInAnotherTube", gen: 7, elapsed: time.Millisecond, ok: true,
			after: func(e *emptyLists) { e.reservedUntil("c", in(time.Second)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEmptyLists()
			local := t0.Add(5 * time.Millisecond) // the answer came 5 ms after the statement's now
			e.found([]string{"a", "b"}, 7, waitInfo{now: t0, ownDeadline: in(time.Second), nextDue: c.next}, local)
			if c.after != nil {
				c.after(e)
			}
			w, ok := e.lookup([]string{"a", "b"}, c.gen, local.Add(c.elapsed))
			require.Equal(t, c.ok, ok)
			if !ok {
				return
			}
			require.Equal(t, t0.Add(c.elapsed), w.now, "now moves on by the local clock")
			require.Equal(t, c.next, w.nextDue)
			require.Nil(t, w.ownDeadline, "a session's own deadline is not shared")
			_, ok = e.lookup([]string{"b", "a"}, c.gen, local.Add(c.elapsed))
			require.False(t, ok, "another watch list")
		})
	}
}

func TestEmptyListsHolds(t *testing.T) {
	cases := []struct {
		name string
		do   func(e *emptyLists)
		free bool
	}{
		{name: "New", do: func(e *emptyLists) {}, free: true},
		{name: "Took", do: func(e *emptyLists) { e.took("s", 1) }},
		{name: "TookAnotherSessions", do: func(e *emptyLists) { e.took("other", 1) }, free: true},
		{name: "TookAndGave", do: func(e *emptyLists) { e.took("s", 1); e.gave("s", 1) }, free: true},
		{name: "GaveAnotherJob", do: func(e *emptyLists) { e.took("s", 1); e.gave("s", 2) }},
		{name: "TookTwoGaveOne", do: func(e *emptyLists) { e.took("s", 1); e.took("s", 2); e.gave("s", 1) }},
		{name: "FoundHoldingNone", do: func(e *emptyLists) { e.took("s", 1); e.holdsNone("s") }, free: true},
		{name: "TooManyToKeep", do: func(e *emptyLists) {
			for id := range uint64(maxHolding + 1) {
				e.took("s", id)
			}
			for id := range uint64(maxHolding + 1) {
				e.gave("s", id)
			}
		}},
		{name: "TooManyToKeepThenFoundHoldingNone", do: func(e *emptyLists) {
			for id := range uint64(maxHolding + 1) {
				e.took("s", id)
			}
			e.holdsNone("s")
		}, free: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEmptyLists()
			c.do(e)
			require.Equal(t, c.free, e.free("s"))
		})
	}
}

// A waiting reserve of a session that holds nothing sends no statement when the last one over
// its tubes found nothing ready and nothing was made ready since; every other reserve does.
func TestWaitingReserveKnowsNothingIsReadyWithoutAStatement(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	b := newTestBackend(t, nil)
	var sent atomic.Int64
	b.reserves.SetBeforeSend(func() { sent.Add(1) })
	reserve := func(s string, timeout time.Duration, tubes ...string) (*backend.Job, error, int64) {
		t.Helper()
		require.NoError(t, b.BeginSession(ctx, backend.SessionID(s), backend.SessionInfo{}))
		before := sent.Load()
		j, err := b.Reserve(ctx, backend.ReserveParams{Session: backend.SessionID(s), Tubes: tubes, Timeout: timeout})
		return j, err, sent.Load() - before
	}
	_, err, n := reserve("first", 50*time.Millisecond, "t")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.EqualValues(t, 1, n, "the first reserve asks, once: its answer holds when it times out")
	_, err, n = reserve("second", 50*time.Millisecond, "t")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.Zero(t, n, "nothing happened since: no statement")
	_, err, n = reserve("now", 0, "t")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.EqualValues(t, 1, n, "a reserve that does not wait asks")
	_, err, n = reserve("other-list", 50*time.Millisecond, "t", "u")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.EqualValues(t, 1, n, "another watch list asks")

	id, err := b.Put(ctx, backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte("x")})
	require.NoError(t, err)
	j, err, n := reserve("holder", 50*time.Millisecond, "t")
	require.NoError(t, err)
	require.Equal(t, id, j.ID, "a job made ready since: the reserve asks and gets it")
	require.EqualValues(t, 1, n)
	_, err, n = reserve("third", 50*time.Millisecond, "t")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.EqualValues(t, 1, n, "a statement that served every session says nothing of what is left")
	_, err, n = reserve("fourth", 50*time.Millisecond, "t")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.Zero(t, n)
	_, err, n = reserve("holder", 50*time.Millisecond, "t")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.EqualValues(t, 2, n, "a session holding a job asks at every attempt, its first and the one at its timeout (DEADLINE_SOON is its own)")
	require.NoError(t, b.Delete(ctx, "holder", id))
	_, err, n = reserve("holder", 50*time.Millisecond, "t")
	require.ErrorIs(t, err, backend.ErrTimedOut)
	require.Zero(t, n, "once it deleted its job, it holds nothing")
}

// A put handed to a waiting reserve makes a reservation whose deadline the last statement over
// its tube did not see: a reserve arriving after it learns it, and gets the job when that
// reservation runs out, as beanstalkd hands it on.
func TestWaitingReserveLearnsAHandedReservationsDeadline(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	b := newTestBackend(t, nil)
	b.poll = time.Hour // only the deadline can wake the second reserve in time
	for _, s := range []backend.SessionID{"holder", "next"} {
		require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	}
	held := startWaitingReserve(t, ctx, b, backend.ReserveParams{Session: "holder", Tubes: []string{"t"}, Timeout: 5 * time.Second}, "t")
	id, err := b.Put(ctx, backend.PutParams{Tube: "t", TTR: time.Second, Body: []byte("x")})
	require.NoError(t, err)
	r := <-held
	require.NoError(t, r.err)
	require.Equal(t, id, r.job.ID)
	began := time.Now()
	j, err := b.Reserve(ctx, backend.ReserveParams{Session: "next", Tubes: []string{"t"}, Timeout: 3 * time.Second})
	require.NoError(t, err)
	require.Equal(t, id, j.ID)
	require.Less(t, time.Since(began), 2*time.Second, "woken when the reservation ran out")
}

// A put that claimed a waiting reserve and made its job ready after all (not handed) answers
// that reserve itself, without a wake: the reserve then asks again, and gets the job, however
// recently a statement found nothing over its tubes.
func TestClaimedReserveAsksAgainWhenItsPutMadeAJobReady(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	b := newTestBackend(t, nil)
	b.poll = time.Hour // only an answer can end the wait in time
	require.NoError(t, b.BeginSession(ctx, "claimed", backend.SessionInfo{}))
	got := startWaitingReserve(t, ctx, b, backend.ReserveParams{Session: "claimed", Tubes: []string{"t"}, Timeout: 3 * time.Second}, "t")
	it := b.newPutItem(backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte("x")})
	require.NotNil(t, it.to, "the put claimed the waiting reserve")
	// The job as the put would have stored it, ready: written behind the store's back, so that
	// nothing but the put's answer tells the reserve.
	var id int64
	require.NoError(t, b.pool.QueryRow(ctx, "INSERT INTO "+pgx.Identifier{b.opts.Schema}.Sanitize()+
		".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, ready_at, body) "+
		"VALUES (nextval('"+pgx.Identifier{b.opts.Schema}.Sanitize()+".job_ids'), 't', 1, 0, 0, 60000000, now(), now(), 'x') RETURNING id").Scan(&id))
	began := time.Now()
	b.hand(it, writeResult{id: uint64(id)}, true)
	r := <-got
	require.NoError(t, r.err)
	require.NotNil(t, r.job)
	require.EqualValues(t, id, r.job.ID)
	require.Less(t, time.Since(began), time.Second)
}

// A reserve already waiting when a reservation is made in its tube learns that reservation's
// deadline, and gets the job when it runs out, as beanstalkd gives a job whose TTR ran out to a
// waiting reserve: not at its next poll. The reservation is the other waiting reserve's, made by
// the put that handed it its job, or by its own statement (the job put through another gateway,
// whose notification woke one waiter).
func TestWaitingReserveGetsAJobWhenItsReservationRunsOut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		otherPutter bool // the job is put through another gateway
	}{
		{name: "HandedByAPut"},
		{name: "ReservedByAStatement", otherPutter: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			b := newTestBackend(t, nil)
			b.poll = time.Hour // only the deadline can wake the second reserve in time
			putter := b
			if c.otherPutter {
				putter = newTestBackend(t, nil, b.opts.Schema)
				require.NoError(t, putter.BeginSession(ctx, "producer", backend.SessionInfo{})) // its lease: each notifies the other
			}
			for _, s := range []backend.SessionID{"first", "second"} {
				require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
			}
			got := make(chan *backend.Job, 2)
			reserve := func(s backend.SessionID) {
				j, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"t"}, Timeout: 4 * time.Second})
				if err != nil {
					t.Error(err)
				}
				got <- j
			}
			go reserve("first")
			require.Eventually(t, func() bool { return b.waiters.idleCount("t") == 1 }, 5*time.Second, time.Millisecond)
			go reserve("second")
			require.Eventually(t, func() bool { return b.waiters.idleCount("t") == 2 }, 5*time.Second, time.Millisecond)
			id, err := putter.Put(ctx, backend.PutParams{Tube: "t", TTR: time.Second, Body: []byte("x")})
			require.NoError(t, err)
			require.Equal(t, id, (<-got).ID)
			began := time.Now()
			j := <-got
			require.NotNil(t, j)
			require.Equal(t, id, j.ID)
			require.Less(t, time.Since(began), 2*time.Second, "woken when the first reservation ran out")
		})
	}
}

// idleCount is how many reserves wait on tube, idle (a put may claim them).
func (ws *waiters) idleCount(tube string) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := 0
	for _, w := range ws.byTube[tube] {
		if w.state == idle {
			n++
		}
	}
	return n
}

// A job taken by reserve-job (here a delayed one, which no waiting reserve could have taken)
// while a reserve waits on its tube goes to that reserve when its TTR runs out, as beanstalkd
// gives it: the reservation's deadline is announced as a reserve statement's is.
func TestWaitingReserveGetsAJobTakenByReserveJobWhenItRunsOut(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	b := newTestBackend(t, nil)
	b.poll = time.Hour // only the deadline can wake the waiting reserve in time
	for _, s := range []backend.SessionID{"waiting", "by-id"} {
		require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	}
	id, err := b.Put(ctx, backend.PutParams{Tube: "t", Delay: time.Hour, TTR: time.Second, Body: []byte("x")})
	require.NoError(t, err)
	got := startWaitingReserve(t, ctx, b, backend.ReserveParams{Session: "waiting", Tubes: []string{"t"}, Timeout: 5 * time.Second}, "t")
	j, err := b.ReserveJob(ctx, "by-id", id)
	require.NoError(t, err)
	require.Equal(t, id, j.ID)
	began := time.Now()
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, id, r.job.ID)
	require.Less(t, time.Since(began), 2500*time.Millisecond, "woken when the reservation ran out")
}
