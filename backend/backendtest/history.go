package backendtest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// event is a JobEvent less its time, which the cases check apart (stores stamp events with
// their own clocks).
type event struct {
	kind    backend.EventKind
	session backend.SessionID
	addr    string
	delay   time.Duration
	policy  string
}

// by is an event caused by, or of a job held by, c.
func (c *client) by(kind backend.EventKind) event {
	return event{kind: kind, session: c.id, addr: c.info().Addr}
}

// byPolicy is an event a policy made.
func byPolicy(kind backend.EventKind, policy string, delay time.Duration) event {
	return event{kind: kind, policy: policy, delay: delay}
}

// history returns job id's events, requiring their times to be set and in order.
func (h *harness) history(id uint64) []event {
	h.Helper()
	evs, err := h.b.JobHistory(h.ctx(), id)
	require.NoError(h, err)
	out := make([]event, 0, len(evs))
	for i, e := range evs {
		require.False(h, e.At.IsZero(), "event %d has no time", i)
		if i > 0 {
			require.False(h, e.At.Before(evs[i-1].At), "event %d (%v) before event %d (%v)", i, e.At, i-1, evs[i-1].At)
		}
		out = append(out, event{e.Kind, e.Session, e.Addr, e.Delay, e.Policy})
	}
	return out
}

func (h *harness) requireHistory(id uint64, want ...event) {
	h.Helper()
	require.Equal(h, want, h.history(id), "history of job %d", id)
}

var historyCases = []testCase{
	{"PutReservedTimedOutReservedBuriedNamesEachHolder", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", History: true})
		producer := h.session().use("work")
		first, second := h.worker("work"), h.worker("work")
		id := producer.put(job{ttr: 5 * time.Second})
		first.reserveID(id)
		h.advance(5 * time.Second)
		second.reserveID(id)
		second.bury(id)
		h.requireHistory(id, producer.by(backend.EventPut), first.by(backend.EventReserved),
			first.by(backend.EventTimedOut), second.by(backend.EventReserved), second.by(backend.EventBuried))
		require.NotEqual(h, first.info().Addr, second.info().Addr)
	}},
	{"ReleasesTouchesKicksAndAHolderLeaving", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", History: true})
		c, w := h.worker("work"), h.worker("work")
		id := c.put(job{delay: 3 * time.Second})
		require.NoError(h, h.b.KickJob(h.ctx(), id))
		w.reserveID(id)
		require.NoError(h, h.b.Touch(h.ctx(), w.id, id))
		require.NoError(h, w.release(id, 0, 2*time.Second))
		h.advance(2 * time.Second)
		w.reserveID(id)
		w.end()
		put := c.by(backend.EventPut)
		put.delay = 3 * time.Second
		released := w.by(backend.EventReleased)
		released.delay = 2 * time.Second
		h.requireHistory(id, put, event{kind: backend.EventKicked}, w.by(backend.EventReserved),
			w.by(backend.EventTouched), released, w.by(backend.EventReserved), w.by(backend.EventHolderLeft))
	}},
	{"APolicyThatActsIsNamed", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", History: true, MaxReserves: 2, RetryDelay: time.Second})
		c := h.worker("work")
		id := c.put(job{ttr: 5 * time.Second})
		c.reserveID(id)
		require.NoError(h, c.release(id, 0, 0))
		h.advance(time.Second)
		c.reserveID(id)
		h.advance(5 * time.Second)
		h.requireState(id, backend.Buried)
		h.requireHistory(id, c.by(backend.EventPut), c.by(backend.EventReserved), c.by(backend.EventReleased),
			byPolicy(backend.EventDelayed, backend.PolicyRetryDelay, time.Second), c.by(backend.EventReserved),
			c.by(backend.EventTimedOut), byPolicy(backend.EventBuried, backend.PolicyMaxReserves, 0))
	}},
	{"KeepsTheLast32Events", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", History: true})
		c := h.worker("work")
		id := c.put(job{})
		for range 20 { // 41 events
			c.reserveID(id)
			require.NoError(h, c.release(id, 0, 0))
		}
		got := h.history(id)
		require.Len(h, got, backend.MaxJobEvents)
		for i, e := range got { // the 10th of 41 on: reserved, released, ...
			want := []backend.EventKind{backend.EventReserved, backend.EventReleased}[i%2]
			require.Equal(h, want, e.kind, fmt.Sprintf("event %d", i))
		}
	}},
	{"GoesWithTheJob", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", History: true})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		c.delete(id)
		_, err := h.b.JobHistory(h.ctx(), id)
		require.ErrorIs(h, err, backend.ErrNotFound)
		_, err = h.b.JobHistory(h.ctx(), id+1000)
		require.ErrorIs(h, err, backend.ErrNotFound)
	}},
	{"NoneWithoutThePolicyAndNoneOnceItIsCleared", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "kept", History: true})
		plain := h.worker("plain")
		a := plain.put(job{})
		plain.reserveID(a)
		require.Empty(h, h.history(a))
		kept := h.worker("kept")
		b := kept.put(job{})
		require.Len(h, h.history(b), 1)
		require.NoError(h, h.b.ClearPolicy(h.ctx(), "kept"))
		kept.reserveID(b)
		require.Empty(h, h.history(b))
	}},
}
