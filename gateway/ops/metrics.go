package ops

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/gateway"
)

// Metrics is the gateway's Observer: command counts and durations, reserve waits, and per-tube
// job times. Its hot path is an array index and atomic adds: the series a command touches are
// resolved once.
type Metrics struct {
	names []string // gateway.CommandNames()

	// counts[cmd][result]: exported by Collect, the combinations that happened and, from the
	// start, every command's ok (see commandCounts.Collect).
	counts [][gateway.NumResults]atomic.Uint64

	durationVec *prometheus.HistogramVec
	durations   []atomic.Pointer[prometheus.Histogram] // per command, resolved at first use

	reserveWait prometheus.Histogram
	tubes       *tubeHistograms
}

// NewMetrics returns the Observer and registers its metrics on reg; maxTubes caps the tubes
// with series of their own (others share tube="*other*").
func NewMetrics(reg prometheus.Registerer, maxTubes int) *Metrics {
	names := gateway.CommandNames()
	m := &Metrics{
		names:  names,
		counts: make([][gateway.NumResults]atomic.Uint64, len(names)),
		durationVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "beangate_command_duration_seconds",
			Help:    "Time from reading a command to making its reply (a waiting reserve included).",
			Buckets: commandBuckets,
		}, []string{"command"}),
		durations: make([]atomic.Pointer[prometheus.Histogram], len(names)),
		reserveWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "beangate_reserve_wait_seconds",
			Help:    "Time a reserve that got a job waited for it.",
			Buckets: queueBuckets,
		}),
		tubes: newTubeHistograms(maxTubes),
	}
	reg.MustRegister(m.durationVec, m.reserveWait, m.tubes.readyWait, m.tubes.processing, (*commandCounts)(m))
	return m
}

// CommandDone implements gateway.Observer.
func (m *Metrics) CommandDone(cmd gateway.CommandID, res gateway.Result, d time.Duration) {
	m.counts[cmd][res].Add(1)
	h := m.durations[cmd].Load()
	if h == nil {
		h = m.resolveDuration(cmd)
	}
	(*h).Observe(d.Seconds())
}

var resolveMu sync.Mutex

func (m *Metrics) resolveDuration(cmd gateway.CommandID) *prometheus.Histogram {
	resolveMu.Lock()
	defer resolveMu.Unlock()
	if h := m.durations[cmd].Load(); h != nil {
		return h
	}
	h := m.durationVec.WithLabelValues(m.names[cmd]).(prometheus.Histogram)
	m.durations[cmd].Store(&h)
	return &h
}

// ReserveWaited implements gateway.Observer.
func (m *Metrics) ReserveWaited(d time.Duration) { m.reserveWait.Observe(d.Seconds()) }

// Tube implements gateway.Observer.
func (m *Metrics) Tube(name string) gateway.TubeObserver { return m.tubes.tube(name) }

// commandCounts exports Metrics.counts as beangate_commands_total{command,result}.
type commandCounts Metrics

var commandsDesc = prometheus.NewDesc("beangate_commands_total",
	"Commands answered, by command and by result (ok, or the error reply in lower case).",
	[]string{"command", "result"}, nil)

func (c *commandCounts) Describe(ch chan<- *prometheus.Desc) { ch <- commandsDesc }

// Collect exports each command's ok count even at 0, so that rate() and increase() over it work
// from the process's start rather than from its first use; the errors appear as they happen
// (a series per command and error would be mostly zeros). A line that is no command is never ok.
func (c *commandCounts) Collect(ch chan<- prometheus.Metric) {
	for cmd := range c.counts {
		for res := range c.counts[cmd] {
			always := gateway.Result(res) == gateway.ResultOK && c.names[cmd] != "unknown"
			if n := c.counts[cmd][res].Load(); n > 0 || always {
				ch <- prometheus.MustNewConstMetric(commandsDesc, prometheus.CounterValue, float64(n),
					c.names[cmd], gateway.Result(res).String())
			}
		}
	}
}
