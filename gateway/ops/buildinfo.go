package ops

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// NewBuildInfo is beangate_build_info, always 1, its labels naming what runs: the version, the
// VCS revision it was built from ("" when unknown), the Go release, and the store's kind. Joined
// on instance, it labels any other series with them (a rolling upgrade's progress, say).
func NewBuildInfo(version, revision, backend string) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "beangate_build_info",
		Help: "Always 1; the labels name the version, VCS revision, Go release and store kind of this process.",
		ConstLabels: prometheus.Labels{
			"version": version, "revision": revision, "goversion": runtime.Version(), "backend": backend,
		},
	}, func() float64 { return 1 })
}
