package backendtest

import (
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// Periodic jobs (backend.Schedules): every store keeps them and claims each tick once.

// everySecond is a schedule putting "tick" into tube every second.
func everySecond(name, tube string) backend.Schedule {
	return backend.Schedule{Name: name, Tube: tube, Every: time.Second, Body: []byte("tick"), Priority: 7,
		TTR: 30 * time.Second}
}

func (h *harness) setSchedule(s backend.Schedule) {
	h.Helper()
	require.NoError(h, h.b.SetSchedule(h.ctx(), s))
}

func (h *harness) schedules() []backend.ScheduleState {
	h.Helper()
	ss, err := h.b.ListSchedules(h.ctx())
	require.NoError(h, err)
	return ss
}

// fire fires tick of name and returns the job's id, 0 when the tick was not claimed.
func (h *harness) fire(name string, tick time.Time) uint64 {
	h.Helper()
	id, fired, err := h.b.FireSchedule(h.ctx(), name, tick)
	require.NoError(h, err)
	require.Equal(h, fired, id != 0, "fired %v with job %d", fired, id)
	return id
}

var scheduleCases = []testCase{
	{"SetListAndClear", func(h *harness) {
		require.Empty(h, h.schedules())
		hourly := backend.Schedule{Name: "hourly", Tube: "reports", Cron: "0 * * * *", Timezone: "Europe/Paris",
			Body: []byte("{\"kind\":\"hourly\"}\r\n\x00"), Priority: 1024, TTR: time.Minute, Delay: 5 * time.Second}
		h.setSchedule(everySecond("b-second", "work"))
		h.setSchedule(hourly)
		got := h.schedules()
		require.Equal(h, []backend.ScheduleState{
			{Schedule: everySecond("b-second", "work"), LastTick: Epoch},
			{Schedule: hourly, LastTick: Epoch},
		}, got, "sorted by name, ticks from the time they were set")
		require.NoError(h, h.b.ClearSchedule(h.ctx(), "hourly"))
		require.ErrorIs(h, h.b.ClearSchedule(h.ctx(), "hourly"), backend.ErrNotFound)
		require.Len(h, h.schedules(), 1)
	}},
	{"ABadScheduleIsRefusedAndNothingKept", func(h *harness) {
		for _, s := range []backend.Schedule{
			{Name: "x", Tube: "t", Cron: "61 * * * *", TTR: time.Second},
			{Name: "x", Tube: "t", Cron: "* * *", TTR: time.Second},
			{Name: "x", Tube: "t", Cron: "0 * * * *", Timezone: "Mars/Olympus", TTR: time.Second},
			{Name: "x", Tube: "t", Every: time.Second}, // no TTR
			{Name: "x", Tube: "t", TTR: time.Second},   // no timing
		} {
			require.ErrorIs(h, h.b.SetSchedule(h.ctx(), s), backend.ErrBadSchedule, "%+v", s)
		}
		require.Empty(h, h.schedules())
	}},
	{"AFiredTickPutsItsJobOnce", func(h *harness) {
		s := everySecond("s", "work")
		s.Delay = 0
		h.setSchedule(s)
		require.Zero(h, h.fire("s", Epoch), "the tick when it was set is not after its last")
		h.advance(1500 * time.Millisecond)
		tick := Epoch.Add(time.Second)
		id := h.fire("s", tick)
		require.NotZero(h, id)
		require.Zero(h, h.fire("s", tick), "a tick is claimed once")
		require.Zero(h, h.fire("s", Epoch.Add(500*time.Millisecond)), "an earlier tick is done")
		st := h.jobStats(id)
		require.Equal(h, backend.Ready, st.State)
		require.Equal(h, "work", st.Tube)
		require.Equal(h, uint32(7), st.Priority)
		require.Equal(h, 30*time.Second, st.TTR)
		j, err := h.b.Peek(h.ctx(), id)
		require.NoError(h, err)
		require.Equal(h, "tick", string(j.Body))
		got := h.schedules()
		require.Len(h, got, 1)
		require.Equal(h, tick, got[0].LastTick)
		require.Equal(h, id, got[0].LastJob)
		require.Equal(h, Epoch.Add(1500*time.Millisecond), got[0].LastRun)
		h.advance(time.Second)
		next := h.fire("s", tick.Add(time.Second))
		require.Greater(h, next, id)
		require.Equal(h, uint64(2), h.tubeStats("work").TotalJobs)
	}},
	{"AFiredJobIsDelayedAsTheScheduleSays", func(h *harness) {
		s := everySecond("s", "work")
		s.Delay = 10 * time.Second
		h.setSchedule(s)
		h.advance(time.Second)
		id := h.fire("s", Epoch.Add(time.Second))
		require.Equal(h, backend.Delayed, h.jobStats(id).State)
		require.Equal(h, 10*time.Second, h.jobStats(id).Delay)
	}},
	{"AFiredJobGoesToAWaitingReserve", func(h *harness) {
		h.setSchedule(everySecond("s", "work"))
		p := h.worker("work").reserveAsync(forever)
		p.requireWaiting()
		h.advance(time.Second)
		p.requireJob(h.fire("s", Epoch.Add(time.Second)))
	}},
	{"FiringAnUnknownScheduleIsNotFound", func(h *harness) {
		_, _, err := h.b.FireSchedule(h.ctx(), "nope", Epoch)
		require.ErrorIs(h, err, backend.ErrNotFound)
	}},
	{"ReplacingKeepsTheLastTickUnlessTheTimingChanges", func(h *harness) {
		h.setSchedule(everySecond("s", "work"))
		h.advance(10 * time.Second)
		id := h.fire("s", Epoch.Add(5*time.Second))
		changed := everySecond("s", "other")
		changed.Body = []byte("new body")
		h.setSchedule(changed) // the same timing: as a gateway restarting with its config does
		got := h.schedules()[0]
		require.Equal(h, Epoch.Add(5*time.Second), got.LastTick)
		require.Equal(h, id, got.LastJob)
		require.Equal(h, "new body", string(got.Body))
		next := h.fire("s", Epoch.Add(10*time.Second))
		require.Equal(h, "other", h.jobStats(next).Tube)

		h.advance(time.Second)
		changed.Every = 2 * time.Second
		h.setSchedule(changed) // a new timing starts from now
		got = h.schedules()[0]
		require.Equal(h, Epoch.Add(11*time.Second), got.LastTick)
		require.Equal(h, next, got.LastJob, "the last run is still shown")
		require.Zero(h, h.fire("s", Epoch.Add(10*time.Second)))
	}},
	{"ManyCallersFiringOneTickPutOneJob", func(h *harness) {
		h.setSchedule(everySecond("s", "work"))
		h.advance(time.Second)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var ids []uint64
		for range 16 {
			wg.Go(func() {
				id, fired, err := h.b.FireSchedule(h.ctx(), "s", Epoch.Add(time.Second))
				if err == nil && fired {
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(h, ids, 1)
		require.Equal(h, uint64(1), h.tubeStats("work").TotalJobs)
	}},
	{"AUniqueTubeAnswersAFiredTickWithTheJobWaiting", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", Unique: true})
		h.setSchedule(everySecond("s", "work"))
		h.advance(2 * time.Second)
		first := h.fire("s", Epoch.Add(time.Second))
		require.Equal(h, first, h.fire("s", Epoch.Add(2*time.Second)), "the same body, still ready")
		require.Equal(h, uint64(1), h.tubeStats("work").TotalJobs)
	}},
}

// scheduleSharedCases run on two gateways sharing a store (RunSharedPolicies).
var scheduleSharedCases = []pairCase{
	{"TwoGatewaysFiringTheSameTicksPutOneJobEach", func(a, b *harness) {
		a.setSchedule(everySecond("s", "work"))
		var wg sync.WaitGroup
		fired := make([]int, 2)
		for i, h := range []*harness{a, b} {
			wg.Go(func() {
				for n := 1; n <= 10; n++ {
					if _, ok, err := h.b.FireSchedule(h.ctx(), "s", Epoch.Add(time.Duration(n)*time.Second)); err == nil && ok {
						fired[i]++
					}
				}
			})
		}
		wg.Wait()
		require.Equal(a, 10, fired[0]+fired[1])
		require.Equal(a, uint64(10), b.tubeStats("work").TotalJobs)
		require.Equal(a, Epoch.Add(10*time.Second), b.schedules()[0].LastTick)
	}},
}

// scheduleRestartCases run with RunRestarts: schedules and their last runs are durable.
var scheduleRestartCases = []testCase{
	{"SchedulesAndTheirLastRunsSurviveARestart", func(h *harness) {
		h.setSchedule(everySecond("s", "work"))
		h.setSchedule(backend.Schedule{Name: "c", Tube: "work", Cron: "*/5 * * * *", TTR: time.Second})
		h.advance(3 * time.Second)
		id := h.fire("s", Epoch.Add(3*time.Second))
		want := h.schedules()
		h.restart()
		require.Equal(h, want, h.schedules())
		require.Zero(h, h.fire("s", Epoch.Add(3*time.Second)), "the tick is not put again")
		h.advance(time.Second)
		require.Greater(h, h.fire("s", Epoch.Add(4*time.Second)), id)
	}},
}
