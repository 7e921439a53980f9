package ops

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/backend"
)

// storeCollector exports the store's queue figures at scrape time: the totals of stats and,
// for at most maxTubes tubes (the first by name), the jobs of each tube in each state. With a
// shared store these are cluster-wide: every gateway reports the same figures.
type storeCollector struct {
	store    backend.Backend
	maxTubes int
	timeout  time.Duration
}

// NewStoreCollector collects store's figures, each scrape bounded by timeout.
func NewStoreCollector(store backend.Backend, maxTubes int, timeout time.Duration) prometheus.Collector {
	return &storeCollector{store: store, maxTubes: maxTubes, timeout: timeout}
}

var (
	storeUpDesc        = desc("beangate_store_up", "1 when the last scrape could read the store's figures, else 0.")
	storeJobsDesc      = desc("beangate_store_jobs", "Jobs in the store by state, all tubes (cluster-wide with a shared store).", "state")
	storeUrgentDesc    = desc("beangate_store_urgent_jobs", "Ready jobs with priority < 1024, all tubes.")
	storePutDesc       = desc("beangate_store_jobs_put_total", "Jobs put since the store was created (stats total-jobs).")
	storeTimeoutsDesc  = desc("beangate_store_job_timeouts_total", "Reservations whose TTR ran out, since the store was created (stats job-timeouts).")
	storeTubesDesc     = desc("beangate_store_tubes", "Tubes that exist.")
	tubeJobsDesc       = desc("beangate_store_tube_jobs", "Jobs of a tube by state (at most --metrics-max-tubes tubes).", "tube", "state")
	tubeTruncatedDesc  = desc("beangate_store_tube_jobs_truncated", "1 when more tubes exist than --metrics-max-tubes, so some have no beangate_store_tube_jobs series.")
	storeScrapeDurDesc = desc("beangate_store_scrape_duration_seconds", "Time the last scrape took to read the store's figures.")
	tubeReadyAgeDesc   = desc("beangate_store_tube_ready_age_seconds", "How long the job a reserve would take next from the tube (peek-ready) has been ready, 0 without ready jobs: the queue's latency, growing while no worker takes jobs (at most --metrics-max-tubes tubes).", "tube")
)

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{storeUpDesc, storeJobsDesc, storeUrgentDesc, storePutDesc, storeTimeoutsDesc, storeTubesDesc, tubeJobsDesc, tubeTruncatedDesc, storeScrapeDurDesc, tubeReadyAgeDesc} {
		ch <- d
	}
}

// tubeWorkers bounds the TubeStats calls in flight during a scrape: a remote store answers
// many tubes in the time of a few round trips, without a burst of connections.
const tubeWorkers = 8

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	up := 0.0
	defer func() {
		ch <- prometheus.MustNewConstMetric(storeUpDesc, prometheus.GaugeValue, up)
		ch <- prometheus.MustNewConstMetric(storeScrapeDurDesc, prometheus.GaugeValue, time.Since(began).Seconds())
	}()
	st, err := c.store.Stats(ctx)
	if err != nil {
		return
	}
	names, err := c.store.ListTubes(ctx)
	if err != nil {
		return
	}
	gauge := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge(storeJobsDesc, st.ReadyJobs, "ready")
	gauge(storeJobsDesc, st.ReservedJobs, "reserved")
	gauge(storeJobsDesc, st.DelayedJobs, "delayed")
	gauge(storeJobsDesc, st.BuriedJobs, "buried")
	gauge(storeUrgentDesc, st.UrgentJobs)
	counter(storePutDesc, st.TotalJobs)
	counter(storeTimeoutsDesc, st.JobTimeouts)
	gauge(storeTubesDesc, uint64(len(names)))

	// Sorted, so that the same tubes are kept scrape after scrape, and so that the series go
	// out in the order the registry sorts them into (by state, then tube): sorting sorted
	// input is what keeps a 10,000-tube scrape fast.
	slices.Sort(names)
	truncated := uint64(0)
	if len(names) > c.maxTubes {
		names, truncated = names[:c.maxTubes], 1
	}
	gauge(tubeTruncatedDesc, truncated)
	stats := c.tubeStats(ctx, names)
	c.readyAges(ctx, ch, stats)
	for _, state := range []struct {
		name  string
		value func(*backend.TubeStats) uint64
	}{
		{"buried", func(ts *backend.TubeStats) uint64 { return ts.BuriedJobs }},
		{"delayed", func(ts *backend.TubeStats) uint64 { return ts.DelayedJobs }},
		{"ready", func(ts *backend.TubeStats) uint64 { return ts.ReadyJobs }},
		{"reserved", func(ts *backend.TubeStats) uint64 { return ts.ReservedJobs }},
	} {
		for _, ts := range stats {
			if ts != nil { // nil: vanished since ListTubes, or the store failed on it
				gauge(tubeJobsDesc, state.value(ts), ts.Name, state.name)
			}
		}
	}
	up = 1
}

// readyAges exports each tube's ready age: 0 for a tube without ready
// jobs, none for a tube whose next job's ready time the store does not know, and none at all
// when the store fails to answer (beangate_store_up stays about the counts).
func (c *storeCollector) readyAges(ctx context.Context, ch chan<- prometheus.Metric, stats []*backend.TubeStats) {
	var names []string
	for _, ts := range stats {
		if ts != nil && ts.ReadyJobs > 0 {
			names = append(names, ts.Name)
		}
	}
	ages := map[string]time.Duration{}
	if len(names) > 0 {
		var err error
		if ages, err = c.store.ReadyAges(ctx, names); err != nil {
			return
		}
	}
	for _, ts := range stats {
		if ts == nil {
			continue
		}
		age, known := ages[ts.Name]
		if ts.ReadyJobs > 0 && !known {
			continue
		}
		ch <- prometheus.MustNewConstMetric(tubeReadyAgeDesc, prometheus.GaugeValue, age.Seconds(), ts.Name)
	}
}

// tubeStats reads the stats of names, tubeWorkers at a time; a failed one is nil.
func (c *storeCollector) tubeStats(ctx context.Context, names []string) []*backend.TubeStats {
	out := make([]*backend.TubeStats, len(names))
	var (
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range min(tubeWorkers, len(names)) {
		wg.Go(func() {
			for i := range next {
				out[i], _ = c.store.TubeStats(ctx, names[i])
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
