package ops

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/gateway"
)

// otherTube labels the per-tube histograms of the tubes beyond the cap.
const otherTube = "*other*"

// tubeHistograms are the per-tube job histograms, for at most max tubes: the first max tubes
// seen get their own series, the rest share tube="*other*", so a tube explosion cannot blow up
// Prometheus. Series stay until the process ends.
type tubeHistograms struct {
	readyWait, processing *prometheus.HistogramVec
	max                   int

	mu    sync.Mutex
	tubes map[string]*tubeObserver
}

func newTubeHistograms(max int) *tubeHistograms {
	return &tubeHistograms{
		readyWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "beangate_job_ready_wait_seconds",
			Help:    "How long a job had been ready when a reserve took it: since it last became ready (put, release, kick, its delay or TTR running out, its owner leaving).",
			Buckets: queueBuckets,
		}, []string{"tube"}),
		processing: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "beangate_job_processing_seconds",
			Help:    "Time from a job's reserve to its delete by the same connection.",
			Buckets: queueBuckets,
		}, []string{"tube"}),
		max:   max,
		tubes: map[string]*tubeObserver{},
	}
}

func (h *tubeHistograms) tube(name string) *tubeObserver {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.tubes[name]; t != nil {
		return t
	}
	label := name
	if len(h.tubes) >= h.max {
		label = otherTube
		if t := h.tubes[otherTube]; t != nil {
			return t
		}
	}
	t := &tubeObserver{
		readyWait:  h.readyWait.WithLabelValues(label),
		processing: h.processing.WithLabelValues(label),
	}
	h.tubes[label] = t // "*other*" is not a valid tube name, so it cannot clash
	return t
}

type tubeObserver struct{ readyWait, processing prometheus.Observer }

func (t *tubeObserver) ReadyWaited(d time.Duration) { t.readyWait.Observe(d.Seconds()) }
func (t *tubeObserver) Processed(d time.Duration)   { t.processing.Observe(d.Seconds()) }

var _ gateway.TubeObserver = (*tubeObserver)(nil)
