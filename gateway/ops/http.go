package ops

import (
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the ops endpoints: /healthz (200 while the process serves), /readyz (200 or
// 503, with the reason as plain text) and /metrics (Prometheus text format, from g).
func Handler(g prometheus.Gatherer, r *Readiness) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ok, reason := r.Check(); !ok {
			plain(w, http.StatusServiceUnavailable, reason)
			return
		}
		plain(w, http.StatusOK, reasonReady)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError, // a failing collector must not hide the rest
		EnableOpenMetrics: false,
	}))
	return mux
}

func plain(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body + "\n"))
}

// Loopback reports whether a listener bound at addr is reachable from this host only. An
// unspecified address (0.0.0.0, ::, a bare :PORT) is reachable from every interface.
func Loopback(addr net.Addr) bool {
	a, ok := addr.(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}
