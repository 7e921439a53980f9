package backendtest

import (
	"errors"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// policyGroups are the groups of the per-tube policies (backend.Policies), left out by
// WithoutPolicies.
func policyGroups() []group {
	return []group{
		{"PolicyAdmin", policyAdminCases, false},
		{"PolicyMaxReserves", maxReservesCases, false},
		{"PolicyExpireAfter", expireAfterCases, false},
		{"PolicyMaxReserved", maxReservedCases, false},
		{"PolicyRate", rateCases, false},
		{"PolicyUnique", uniqueCases, false},
		{"PolicyRetryDelay", retryDelayCases, false},
		{"PolicyHistory", historyCases, false},
	}
}

// expiryLag is how late after its deadline a store may apply an expiry (by the store's
// clock): a store may sweep rather than keep a timer per job.
const expiryLag = time.Second

func (h *harness) setPolicy(p backend.Policy) {
	h.Helper()
	require.NoError(h, h.b.SetPolicy(h.ctx(), p))
}

func (h *harness) clearPolicy(pattern string) {
	h.Helper()
	require.NoError(h, h.b.ClearPolicy(h.ctx(), pattern))
}

// actions collects the policy actions the store reports from now on.
type actions struct {
	mu  sync.Mutex
	got []backend.PolicyAction
}

func (h *harness) observeActions() *actions {
	a := &actions{}
	h.b.ObservePolicyActions(func(pa backend.PolicyAction) {
		a.mu.Lock()
		a.got = append(a.got, pa)
		a.mu.Unlock()
	})
	return a
}

// requireSeen requires that want was reported (Job compared only when want.Job != 0).
func (a *actions) requireSeen(h *harness, want backend.PolicyAction) {
	h.Helper()
	require.Eventually(h, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, g := range a.got {
			if g.Tube == want.Tube && g.Policy == want.Policy && g.Action == want.Action && (want.Job == 0 || g.Job == want.Job) {
				return true
			}
		}
		return false
	}, watchdog, 5*time.Millisecond, "action %+v not reported", want)
}

func (c *client) release(id uint64, pri uint32, delay time.Duration) error {
	return c.h.b.Release(c.h.ctx(), backend.ReleaseParams{Session: c.id, ID: id, Priority: pri, Delay: delay})
}

func (c *client) delete(id uint64) {
	c.h.Helper()
	require.NoError(c.h, c.h.b.Delete(c.h.ctx(), c.id, id))
}

func (c *client) bury(id uint64) {
	c.h.Helper()
	require.NoError(c.h, c.h.b.Bury(c.h.ctx(), c.id, id, 0))
}

// requireChangeWakes checks that change, made while a reserve waits on "work" under policy p
// with a job held and one ready, hands the waiter the ready job.
func (h *harness) requireChangeWakes(p backend.Policy, change func()) {
	h.Helper()
	h.setPolicy(p)
	c := h.worker("work")
	a, b := c.put(job{}), c.put(job{})
	c.reserveID(a)
	w := h.worker("work").reserveAsync(forever)
	w.requireWaiting()
	change()
	w.requireJob(b)
}

// raceReserves has every worker try a reserve at once and returns how many got a job.
func raceReserves(workers []*client) int {
	var wg sync.WaitGroup
	got := make(chan uint64, len(workers))
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if j, err := w.tryReserve(); err == nil {
				got <- j.ID
			}
		}()
	}
	wg.Wait()
	return len(got)
}

// worker is a session using and watching tube only.
func (h *harness) worker(tube string) *client {
	h.Helper()
	return h.session().use(tube).watch(tube).ignore(backend.DefaultTube)
}

var policyAdminCases = []testCase{
	{"NoPoliciesAtFirst", func(h *harness) {
		ps, err := h.b.ListPolicies(h.ctx())
		require.NoError(h, err)
		require.Empty(h, ps)
		_, err = h.b.Policy(h.ctx(), "email")
		require.ErrorIs(h, err, backend.ErrNotFound)
		require.ErrorIs(h, h.b.ClearPolicy(h.ctx(), "email"), backend.ErrNotFound)
	}},
	{"SetGetListClearRoundTrip", func(h *harness) {
		a := backend.Policy{Tube: "email-*", MaxReserves: 5, ExpireAfter: time.Hour, ExpireAction: backend.ExpireBury,
			MaxReserved: 3, Rate: 50, Burst: 10, Unique: true, RetryDelay: time.Second, RetryDelayMax: 10 * time.Minute}
		b := backend.Policy{Tube: "billing", Rate: 0.5, RetryDelay: 1500 * time.Millisecond}
		h.setPolicy(a)
		h.setPolicy(b)
		got, err := h.b.Policy(h.ctx(), "email-*")
		require.NoError(h, err)
		require.Equal(h, a, got)
		_, err = h.b.Policy(h.ctx(), "email-x") // no glob matching here
		require.ErrorIs(h, err, backend.ErrNotFound)
		ps, err := h.b.ListPolicies(h.ctx())
		require.NoError(h, err)
		require.Equal(h, []backend.Policy{b, a}, ps)

		h.clearPolicy("billing")
		ps, err = h.b.ListPolicies(h.ctx())
		require.NoError(h, err)
		require.Equal(h, []backend.Policy{a}, ps)
	}},
	{"SetReplacesThePolicyWhole", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "t", MaxReserves: 5, Unique: true})
		h.setPolicy(backend.Policy{Tube: "t", MaxReserved: 2})
		got, err := h.b.Policy(h.ctx(), "t")
		require.NoError(h, err)
		require.Equal(h, backend.Policy{Tube: "t", MaxReserved: 2}, got)
	}},
	{"AnInvalidPolicyIsRefused", func(h *harness) {
		for _, p := range []backend.Policy{
			{},
			{Tube: "a b"},
			{Tube: "t", ExpireAfter: -time.Second},
			{Tube: "t", ExpireAfter: time.Second, ExpireAction: "archive"},
			{Tube: "t", Burst: 3},
			{Tube: "t", RetryDelayMax: time.Minute},
		} {
			require.ErrorIs(h, h.b.SetPolicy(h.ctx(), p), backend.ErrBadPolicy, "%+v", p)
		}
		ps, err := h.b.ListPolicies(h.ctx())
		require.NoError(h, err)
		require.Empty(h, ps)
	}},
	{"AGlobGovernsTubesMadeLaterAndTheMostSpecificMatchWins", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "email-*", MaxReserves: 1})
		h.setPolicy(backend.Policy{Tube: "email-vip"}) // exempts one tube: policies do not merge
		c := h.worker("email-bulk")
		id := c.put(job{})
		c.reserveID(id)
		require.ErrorIs(h, c.release(id, 0, 0), backend.ErrBuried)
		h.requireState(id, backend.Buried)

		v := h.worker("email-vip")
		vid := v.put(job{})
		v.reserveID(vid)
		require.NoError(h, v.release(vid, 0, 0))
		h.requireState(vid, backend.Ready)

		o := h.worker("sms")
		oid := o.put(job{})
		o.reserveID(oid)
		require.NoError(h, o.release(oid, 0, 0))
		h.requireState(oid, backend.Ready)
	}},
	{"ClearingFallsBackToTheNextMatch", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "*", MaxReserves: 1})
		h.setPolicy(backend.Policy{Tube: "work"})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, c.release(id, 0, 0))
		h.clearPolicy("work")
		c.reserveID(id)
		require.ErrorIs(h, c.release(id, 0, 0), backend.ErrBuried)
	}},
}

var maxReservesCases = []testCase{
	{"AReleaseBeforeTheLimitRequeues", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 2})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, c.release(id, 0, 0))
		h.requireState(id, backend.Ready)
	}},
	{"AReleaseAtTheLimitBuriesAndAnswersBuried", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 2})
		seen := h.observeActions()
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, c.release(id, 0, 0))
		c.reserveID(id)
		require.ErrorIs(h, c.release(id, 7, 0), backend.ErrBuried)
		st := h.jobStats(id)
		require.Equal(h, backend.Buried, st.State)
		require.Equal(h, uint32(7), st.Priority)
		require.Equal(h, uint32(2), st.Reserves)
		require.Equal(h, uint32(2), st.Releases)
		require.Equal(h, uint32(1), st.Buries)
		ts := h.tubeStats("work")
		require.Equal(h, uint64(1), ts.BuriedJobs)
		require.Zero(h, ts.ReservedJobs)
		require.Zero(h, ts.ReadyJobs)
		c.requireNothing(backend.ErrTimedOut)
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyMaxReserves, Action: backend.ActionBury, Job: id})
	}},
	{"AReleaseWithADelayAtTheLimitBuries", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 1})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.ErrorIs(h, c.release(id, 0, time.Minute), backend.ErrBuried)
		h.requireState(id, backend.Buried)
		require.Zero(h, h.tubeStats("work").DelayedJobs)
	}},
	{"ATTRRunningOutAtTheLimitBuries", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 2})
		c := h.worker("work")
		id := c.put(job{ttr: 5 * time.Second})
		c.reserveID(id)
		h.advance(5 * time.Second)
		h.requireState(id, backend.Ready)
		c.reserveID(id)
		h.advance(5 * time.Second)
		st := h.jobStats(id)
		require.Equal(h, backend.Buried, st.State)
		require.Equal(h, uint32(2), st.Timeouts)
		require.Equal(h, uint32(1), st.Buries)
		require.Zero(h, h.stats().ReservedJobs)
	}},
	{"AHolderLeavingAtTheLimitBuries", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 1})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		w := h.worker("work")
		p := w.reserveAsync(forever)
		c.end()
		h.requireState(id, backend.Buried)
		p.requireWaiting() // the job is not handed to a waiting reserve
	}},
	{"AKickedJobGetsOneMoreTry", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 1})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.ErrorIs(h, c.release(id, 0, 0), backend.ErrBuried)
		require.Equal(h, uint64(1), h.kick("work", 10))
		c.reserveID(id)
		require.ErrorIs(h, c.release(id, 0, 0), backend.ErrBuried)
		require.Equal(h, uint32(2), h.jobStats(id).Buries)
	}},
	{"BuryAndDeleteByTheHolderAreUnchanged", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 1})
		c := h.worker("work")
		a, b := c.put(job{}), c.put(job{})
		c.reserveID(a)
		c.bury(a)
		require.Equal(h, uint32(1), h.jobStats(a).Buries)
		c.reserveID(b)
		c.delete(b)
		h.requireGone(b)
	}},
	{"APolicySetWhileTheJobIsReservedCountsItsPastReserves", func(h *harness) {
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, c.release(id, 0, 0))
		c.reserveID(id) // reserves = 2
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 2})
		require.ErrorIs(h, c.release(id, 0, 0), backend.ErrBuried)
	}},
	{"ARaisedLimitLetsTheJobBack", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 1})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		h.setPolicy(backend.Policy{Tube: "work", MaxReserves: 3})
		require.NoError(h, c.release(id, 0, 0))
		h.requireState(id, backend.Ready)
	}},
}

var expireAfterCases = []testCase{
	{"AReadyJobIsDeletedAfterItsTime", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		seen := h.observeActions()
		c := h.worker("work")
		id := c.put(job{})
		h.advance(time.Minute - expiryLag - time.Millisecond)
		h.requireState(id, backend.Ready)
		h.advance(2*expiryLag + time.Millisecond)
		h.requireGone(id)
		c.requireNothing(backend.ErrTimedOut)
		ts := h.tubeStats("work")
		require.Zero(h, ts.ReadyJobs)
		require.Equal(h, uint64(1), ts.TotalJobs)
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyExpireAfter, Action: backend.ActionDelete, Job: id})
	}},
	{"DelayedAndBuriedJobsAreDeleted", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		c := h.worker("work")
		delayed := h.jobInState(c, backend.Delayed)
		buried := h.jobInState(c, backend.Buried)
		h.advance(time.Minute + expiryLag)
		h.requireGone(delayed)
		h.requireGone(buried)
		ts := h.tubeStats("work")
		require.Zero(h, ts.DelayedJobs)
		require.Zero(h, ts.BuriedJobs)
	}},
	{"WithBuryReadyAndDelayedJobsAreBuried", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute, ExpireAction: backend.ExpireBury})
		seen := h.observeActions()
		c := h.worker("work")
		ready := h.jobInState(c, backend.Ready)
		delayed := h.jobInState(c, backend.Delayed)
		buried := h.jobInState(c, backend.Buried)
		h.advance(time.Minute + expiryLag)
		for _, id := range []uint64{ready, delayed} {
			st := h.jobStats(id)
			require.Equal(h, backend.Buried, st.State)
			require.Equal(h, uint32(1), st.Buries)
		}
		require.Equal(h, uint32(1), h.jobStats(buried).Buries) // left as it was
		require.Equal(h, uint64(3), h.tubeStats("work").BuriedJobs)
		c.requireNothing(backend.ErrTimedOut)
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyExpireAfter, Action: backend.ActionBury, Job: ready})
	}},
	{"AJobExpiresOnce", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute, ExpireAction: backend.ExpireBury})
		c := h.worker("work")
		id := c.put(job{})
		h.advance(time.Minute + expiryLag)
		h.requireState(id, backend.Buried)
		require.Equal(h, uint64(1), h.kick("work", 1))
		h.advance(time.Hour)
		h.requireState(id, backend.Ready)
		c.reserveID(id)
	}},
	{"AReservedJobIsLeftToItsHolderThenExpiresWhenItComesBack", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		c := h.worker("work")
		id := c.put(job{ttr: time.Hour})
		c.reserveID(id)
		h.advance(2 * time.Minute)
		h.requireState(id, backend.Reserved)
		require.NoError(h, c.release(id, 0, 0))
		h.advance(expiryLag)
		h.requireGone(id)
	}},
	{"AReservedJobWhoseTTRRunsOutPastItsTimeExpires", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute, ExpireAction: backend.ExpireBury})
		c := h.worker("work")
		id := c.put(job{ttr: 2 * time.Minute})
		c.reserveID(id)
		h.advance(2*time.Minute + expiryLag)
		st := h.jobStats(id)
		require.Equal(h, backend.Buried, st.State)
		require.Equal(h, uint32(1), st.Timeouts)
	}},
	{"AJobWhoseHolderLeavesPastItsTimeExpires", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		c := h.worker("work")
		id := c.put(job{ttr: time.Hour})
		c.reserveID(id)
		h.advance(2 * time.Minute)
		p := h.worker("work").reserveAsync(forever)
		c.end()
		h.advance(expiryLag)
		// A shared store may expire it from a step of its own that runs just after the session's
		// end: give that step real time as well.
		require.Eventually(h, func() bool {
			_, err := h.b.JobStats(h.ctx(), id)
			return errors.Is(err, backend.ErrNotFound)
		}, 2*time.Second, 10*time.Millisecond, "job %d should be gone", id)
		p.requireWaiting()
	}},
	{"AnExpiredJobReleasedWithBuryAnswersBuried", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute, ExpireAction: backend.ExpireBury})
		c := h.worker("work")
		id := c.put(job{ttr: time.Hour})
		c.reserveID(id)
		h.advance(2 * time.Minute)
		require.ErrorIs(h, c.release(id, 0, 0), backend.ErrBuried)
		h.requireState(id, backend.Buried)
	}},
	{"TheHolderMayDeleteAnExpiredReservedJob", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		c := h.worker("work")
		id := c.put(job{ttr: time.Hour})
		c.reserveID(id)
		h.advance(2 * time.Minute)
		c.delete(id)
	}},
	{"APolicySetLaterExpiresJobsAlreadyOld", func(h *harness) {
		c := h.worker("work")
		old := c.put(job{})
		h.advance(2 * time.Minute)
		young := c.put(job{})
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		h.advance(expiryLag)
		h.requireGone(old)
		h.requireState(young, backend.Ready)
		h.advance(time.Minute)
		h.requireGone(young)
	}},
	{"ClearingThePolicyStopsExpiry", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		c := h.worker("work")
		id := c.put(job{})
		h.clearPolicy("work")
		h.advance(time.Hour)
		h.requireState(id, backend.Ready)
	}},
	{"OtherTubesAreUntouched", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", ExpireAfter: time.Minute})
		c := h.worker("other")
		id := c.put(job{})
		h.advance(time.Hour)
		h.requireState(id, backend.Ready)
	}},
}

var maxReservedCases = []testCase{
	{"AReserveBeyondTheCapFindsNothing", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserved: 2})
		c := h.worker("work")
		a, b, third := c.put(job{}), c.put(job{}), c.put(job{})
		c.reserveID(a)
		h.worker("work").reserveID(b)
		c.requireNothing(backend.ErrTimedOut)
		h.requireState(third, backend.Ready)
		ts := h.tubeStats("work")
		require.Equal(h, uint64(2), ts.ReservedJobs)
		require.Equal(h, uint64(1), ts.ReadyJobs)
	}},
	{"AReserveAtTheCapTakesFromItsOtherTubes", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserved: 1})
		c := h.worker("work").watch("other")
		first := c.put(job{pri: 0})
		c.put(job{pri: 0})
		c.reserveID(first)
		other := h.session().use("other").put(job{pri: 100})
		c.reserveID(other)
	}},
	{"AWaitingReserveIsWokenWhenASlotFrees", func(h *harness) {
		// Each way a reservation ends frees the slot; the waiter then takes the best ready
		// job, which is the freed one itself when it went back to ready with priority 0.
		for _, free := range []struct {
			name     string
			do       func(h *harness, c *client, id uint64)
			getsHeld bool
		}{
			{"delete", func(h *harness, c *client, id uint64) { c.delete(id) }, false},
			{"release", func(h *harness, c *client, id uint64) { require.NoError(h, c.release(id, 100, 0)) }, false},
			{"bury", func(h *harness, c *client, id uint64) { c.bury(id) }, false},
			{"end", func(h *harness, c *client, id uint64) { c.end() }, true},
			{"ttr", func(h *harness, c *client, id uint64) { h.advance(10 * time.Second) }, true},
		} {
			tube := "work-" + free.name
			h.setPolicy(backend.Policy{Tube: tube, MaxReserved: 1})
			c := h.worker(tube)
			held := c.put(job{})
			next := c.put(job{pri: 1})
			c.reserveID(held)
			p := h.worker(tube).reserveAsync(forever)
			p.requireWaiting()
			free.do(h, c, held)
			if free.getsHeld {
				p.requireJob(held)
			} else {
				p.requireJob(next)
			}
		}
	}},
	{"ALoweredCapHoldsUntilTheReservedCountFallsBelowIt", func(h *harness) {
		c := h.worker("work")
		ids := []uint64{c.put(job{}), c.put(job{}), c.put(job{})}
		last := c.put(job{})
		for _, id := range ids {
			c.reserveID(id)
		}
		h.setPolicy(backend.Policy{Tube: "work", MaxReserved: 1})
		require.Equal(h, uint64(3), h.tubeStats("work").ReservedJobs) // nobody loses a job
		w := h.worker("work")
		p := w.reserveAsync(forever)
		c.delete(ids[0])
		p.requireWaiting()
		c.delete(ids[1])
		p.requireWaiting()
		c.delete(ids[2])
		p.requireJob(last)
	}},
	{"ARaisedCapWakesAWaitingReserve", func(h *harness) {
		h.requireChangeWakes(backend.Policy{Tube: "work", MaxReserved: 1}, func() {
			h.setPolicy(backend.Policy{Tube: "work", MaxReserved: 2})
		})
	}},
	{"ClearingTheCapWakesAWaitingReserve", func(h *harness) {
		h.requireChangeWakes(backend.Policy{Tube: "work", MaxReserved: 1}, func() { h.clearPolicy("work") })
	}},
	{"AReserveAtTheCapTimesOut", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserved: 1})
		c := h.worker("work")
		a := c.put(job{})
		c.put(job{})
		c.reserveID(a)
		p := h.worker("work").reserveAsync(3 * time.Second)
		h.advance(3 * time.Second)
		p.requireErr(backend.ErrTimedOut)
	}},
	{"ReserveJobIgnoresTheCapButCounts", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserved: 1})
		c := h.worker("work")
		a, b := c.put(job{}), c.put(job{})
		c.reserveID(a)
		_, err := h.b.ReserveJob(h.ctx(), c.id, b)
		require.NoError(h, err)
		c.delete(a)
		c.put(job{})
		c.requireNothing(backend.ErrTimedOut) // b still holds the one slot
	}},
	{"ConcurrentReservesNeverExceedTheCap", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", MaxReserved: 3})
		seen := h.observeActions()
		p := h.worker("work")
		for range 20 {
			p.put(job{})
		}
		workers := make([]*client, 10)
		for i := range workers {
			workers[i] = h.worker("work")
		}
		require.Equal(h, 3, raceReserves(workers))
		require.Equal(h, uint64(3), h.tubeStats("work").ReservedJobs)
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyMaxReserved, Action: backend.ActionDefer})
	}},
}

var rateCases = []testCase{
	{"ABurstThenOneReservePerInterval", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Rate: 2, Burst: 3})
		seen := h.observeActions()
		c := h.worker("work")
		ids := make([]uint64, 6)
		for i := range ids {
			ids[i] = c.put(job{})
		}
		for _, id := range ids[:3] {
			c.reserveID(id)
		}
		c.requireNothing(backend.ErrTimedOut)
		h.advance(400 * time.Millisecond)
		c.requireNothing(backend.ErrTimedOut)
		h.advance(100 * time.Millisecond)
		c.reserveID(ids[3])
		c.requireNothing(backend.ErrTimedOut)
		h.advance(time.Second)
		c.reserveID(ids[4])
		c.reserveID(ids[5])
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyRate, Action: backend.ActionDefer})
	}},
	{"BurstDefaultsToOne", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Rate: 1})
		c := h.worker("work")
		a, b := c.put(job{ttr: time.Hour}), c.put(job{}) // a stays reserved while the clock moves
		c.reserveID(a)
		c.requireNothing(backend.ErrTimedOut)
		h.advance(5 * time.Second) // the bucket holds one token, however long it waits
		c.reserveID(b)
		c.put(job{})
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"AWaitingReserveIsWokenWhenATokenAccrues", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Rate: 1})
		c := h.worker("work")
		a, b := c.put(job{}), c.put(job{})
		c.reserveID(a)
		p := h.worker("work").reserveAsync(forever)
		p.requireWaiting()
		h.advance(time.Second)
		p.requireJob(b)
	}},
	{"AReserveWithoutATokenTakesFromItsOtherTubes", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Rate: 1})
		c := h.worker("work").watch("other")
		a := c.put(job{})
		c.put(job{})
		c.reserveID(a)
		other := h.session().use("other").put(job{pri: 100})
		c.reserveID(other)
	}},
	{"OtherTubesAndReserveJobSpendNoToken", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Rate: 1})
		c := h.worker("work").watch("other")
		o := h.session().use("other")
		for range 3 {
			c.reserveID(o.put(job{}))
		}
		b := c.put(job{pri: 5})
		_, err := h.b.ReserveJob(h.ctx(), c.id, b)
		require.NoError(h, err)
		a := c.put(job{})
		c.reserveID(a)
	}},
	{"ReleasedJobsSpendATokenEachTimeTheyAreReserved", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Rate: 1})
		c := h.worker("work")
		a := c.put(job{})
		c.reserveID(a)
		require.NoError(h, c.release(a, 0, 0))
		c.requireNothing(backend.ErrTimedOut)
		h.advance(time.Second)
		c.reserveID(a)
	}},
	{"ClearingTheRateWakesAWaitingReserve", func(h *harness) {
		h.requireChangeWakes(backend.Policy{Tube: "work", Rate: 0.01}, func() { h.clearPolicy("work") })
	}},
}

var uniqueCases = []testCase{
	{"APutOfAReadyJobsBodyReturnsItsID", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		seen := h.observeActions()
		c := h.worker("work")
		id := c.put(job{body: "refresh user 42"})
		require.Equal(h, id, c.put(job{body: "refresh user 42", pri: 9, delay: time.Minute}))
		other := c.put(job{body: "refresh user 43"})
		require.NotEqual(h, id, other)
		st := h.jobStats(id)
		require.Equal(h, backend.Ready, st.State)
		require.Equal(h, uint32(0), st.Priority) // the first put's
		ts := h.tubeStats("work")
		require.Equal(h, uint64(2), ts.TotalJobs)
		require.Equal(h, uint64(2), ts.ReadyJobs)
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyUnique, Action: backend.ActionDedupe, Job: id})
	}},
	{"ADelayedJobMatches", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		id := c.put(job{body: "x", delay: time.Minute})
		require.Equal(h, id, c.put(job{body: "x"}))
		require.Equal(h, uint64(1), h.tubeStats("work").DelayedJobs)
	}},
	{"ReservedBuriedAndDeletedJobsDoNotMatch", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		reserved := c.put(job{body: "r"})
		c.reserveID(reserved)
		require.NotEqual(h, reserved, c.put(job{body: "r"}))

		buried := h.jobInState(c, backend.Buried)
		require.NotEqual(h, buried, c.put(job{body: "body"}))

		gone := c.put(job{body: "d"})
		_, err := h.b.ReserveJob(h.ctx(), c.id, gone)
		require.NoError(h, err)
		c.delete(gone)
		require.NotEqual(h, gone, c.put(job{body: "d"}))
	}},
	{"AReservedThenReleasedJobMatchesAgain", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		first := c.put(job{body: "x", pri: 1})
		c.reserveID(first)
		second := c.put(job{body: "x", pri: 2})
		require.NotEqual(h, first, second)
		require.NoError(h, c.release(first, 1, 0))
		// Both are ready now, with one body: a put returns one of them.
		require.Contains(h, []uint64{first, second}, c.put(job{body: "x"}))
		c.reserveID(first)
		c.reserveID(second)
		third := c.put(job{body: "x"})
		require.NotContains(h, []uint64{first, second}, third)
	}},
	{"AKickedJobMatchesAgain", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		id := h.jobInState(c, backend.Buried)
		h.kick("work", 1)
		require.Equal(h, id, c.put(job{body: "body"}))
	}},
	{"OtherTubesAreSeparate", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "*", Unique: true})
		a := h.worker("a").put(job{body: "x"})
		b := h.worker("b").put(job{body: "x"})
		require.NotEqual(h, a, b)
	}},
	{"ABodyThatOnlySharesAPrefixDoesNotMatch", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		a := c.put(job{body: "abc"})
		require.NotEqual(h, a, c.put(job{body: "ab"}))
		require.NotEqual(h, a, c.put(job{body: "abcd"}))
		require.NotEqual(h, a, c.put(job{body: "abc\x00"}))
	}},
	{"APolicySetLaterMatchesJobsAlreadyThere", func(h *harness) {
		c := h.worker("work")
		a := c.put(job{body: "x"})
		require.NotEqual(h, a, c.put(job{body: "x"}))
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		require.Contains(h, []uint64{a, a + 1}, c.put(job{body: "x"}))
		require.Equal(h, uint64(2), h.tubeStats("work").TotalJobs)
	}},
	{"AfterClearingDuplicatesAreStored", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		a := c.put(job{body: "x"})
		h.clearPolicy("work")
		require.NotEqual(h, a, c.put(job{body: "x"}))
	}},
	{"APutBatchDedupesWithinItself", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		p := backend.PutParams{Session: c.id, Tube: "work", TTR: time.Second}
		ps := []backend.PutParams{p, p, p}
		ps[0].Body, ps[1].Body, ps[2].Body = []byte("x"), []byte("y"), []byte("x")
		res := h.b.PutBatch(h.ctx(), ps)
		for _, r := range res {
			require.NoError(h, r.Err)
		}
		require.NotEqual(h, res[0].ID, res[1].ID)
		require.Equal(h, res[0].ID, res[2].ID)
	}},
	{"AJobMovedInIsFiledUnderItsNewTubesPolicy", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "dest", Unique: true, ExpireAfter: time.Minute})
		id := h.worker("src").put(job{body: "x"})
		require.Equal(h, 1, h.moveJobs("src", "dest", backend.Ready, 10))
		require.Equal(h, id, h.worker("dest").put(job{body: "x"}))
		h.advance(time.Minute + expiryLag)
		h.requireGone(id)
	}},
	{"AJobMovedAwayNoLongerMatches", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		c := h.worker("work")
		a := c.put(job{body: "x"})
		require.Equal(h, 1, h.moveJobs("work", "elsewhere", backend.Ready, 10))
		require.NotEqual(h, a, c.put(job{body: "x"}))
	}},
}

// policyRestartCases run with RunRestarts: policies are durable state.
var policyRestartCases = []testCase{
	{"PoliciesSurviveARestartAndKeepActing", func(h *harness) {
		ps := []backend.Policy{
			{Tube: "mail-*", MaxReserves: 1, ExpireAfter: time.Hour, ExpireAction: backend.ExpireBury, MaxReserved: 1, Rate: 2.5, Burst: 4},
			{Tube: "mail-x"},
			{Tube: "retry", RetryDelay: 2 * time.Second, RetryDelayMax: time.Minute},
			{Tube: "work", Unique: true, ExpireAfter: time.Minute},
		}
		for _, p := range ps {
			h.setPolicy(p)
		}
		h.clearPolicy("mail-x")
		c := h.worker("work")
		id := c.put(job{body: "x"})
		h.restart()
		got, err := h.b.ListPolicies(h.ctx())
		require.NoError(h, err)
		require.Equal(h, []backend.Policy{ps[0], ps[2], ps[3]}, got)
		c = h.worker("work")
		require.Equal(h, id, c.put(job{body: "x"})) // the unique index is rebuilt
		h.advance(time.Minute + expiryLag)
		h.requireGone(id)

		m := h.worker("mail-a")
		mid := m.put(job{})
		m.reserveID(mid)
		require.ErrorIs(h, m.release(mid, 0, 0), backend.ErrBuried)

		r := h.worker("retry")
		rid := r.put(job{})
		r.reserveID(rid)
		require.NoError(h, r.release(rid, 0, 0))
		h.requireBackedOff(rid, 2*time.Second)
	}},
}
