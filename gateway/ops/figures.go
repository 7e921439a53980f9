package ops

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/gateway"
)

// figuresCollector exports this process's connection figures, read at scrape time (the gateway
// counts them anyway, for stats).
type figuresCollector struct {
	figures func() gateway.Figures
	ready   func() bool
}

// NewFiguresCollector collects the connection gauges and counters of figures (a Server's
// Figures) and beangate_ready from ready; with ready nil, not beangate_ready (NewReadyCollector
// exports it from the start, before there is a Server).
func NewFiguresCollector(figures func() gateway.Figures, ready func() bool) prometheus.Collector {
	return &figuresCollector{figures: figures, ready: ready}
}

// NewReadyCollector collects beangate_ready from ready, alone: registered at start, it shows 0
// while the store is not open yet, where an alert on it can see a gateway waiting for its store.
func NewReadyCollector(ready func() bool) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "beangate_ready", Help: readyHelp}, func() float64 {
		if ready() {
			return 1
		}
		return 0
	})
}

const readyHelp = "1 when /readyz answers 200, else 0."

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	connectionsDesc = desc("beangate_connections", "Beanstalk connections open now and past their handshake and auth.")
	totalConnsDesc  = desc("beangate_connections_accepted_total", "Beanstalk connections served since start (as stats total-connections).")
	handshakingDesc = desc("beangate_connections_handshaking", "Connections in the TLS handshake or not yet authenticated.")
	rejectedDesc    = desc("beangate_connections_rejected_total", "Connections closed before being served, by reason.", "reason")
	producersDesc   = desc("beangate_producers", "Connections that have sent a put (as stats current-producers).")
	workersDesc     = desc("beangate_workers", "Connections that have sent a reserve (as stats current-workers).")
	waitingDesc     = desc("beangate_waiting_reserves", "Connections waiting in a reserve now.")
	readyDesc       = desc("beangate_ready", readyHelp)
)

func (c *figuresCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{connectionsDesc, totalConnsDesc, handshakingDesc, rejectedDesc, producersDesc, workersDesc, waitingDesc} {
		ch <- d
	}
	if c.ready != nil {
		ch <- readyDesc
	}
}

func (c *figuresCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.figures()
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	gauge(connectionsDesc, f.Connections)
	ch <- prometheus.MustNewConstMetric(totalConnsDesc, prometheus.CounterValue, float64(f.TotalConnections))
	gauge(handshakingDesc, f.Handshaking)
	for r, n := range f.Rejected {
		ch <- prometheus.MustNewConstMetric(rejectedDesc, prometheus.CounterValue, float64(n), gateway.Rejection(r).String())
	}
	gauge(producersDesc, f.Producers)
	gauge(workersDesc, f.Workers)
	gauge(waitingDesc, f.Waiting)
	if c.ready != nil {
		ready := int64(0)
		if c.ready() {
			ready = 1
		}
		gauge(readyDesc, ready)
	}
}
