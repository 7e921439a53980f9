package ops_test

import (
	"net"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/gateway/ops"
)

// opsServer is a gateway over the memory store with the metrics wired as cmd/beangate wires
// them, and its ops endpoints on a real loopback HTTP server.
type opsServer struct {
	addr    string // beanstalk
	http    string // ops base URL
	srv     *gateway.Server
	store   backend.Backend
	ready   *ops.Readiness
	reg     *prometheus.Registry
	metrics *ops.Metrics
}

func startOpsServer(t testing.TB, maxTubes int, cfg gateway.Config) *opsServer {
	t.Helper()
	return startOpsServerOn(t, memory.New(memory.Options{}), maxTubes, cfg)
}

// startOpsServerOn is startOpsServer over raw, which it closes at the end.
func startOpsServerOn(t testing.TB, raw backend.Backend, maxTubes int, cfg gateway.Config) *opsServer {
	t.Helper()
	reg := prometheus.NewRegistry()
	t.Cleanup(func() { _ = raw.Close() })
	ops.RegisterBinlog(reg, raw)
	store := ops.InstrumentBackend(raw, reg)
	m := ops.NewMetrics(reg, maxTubes)
	cfg.Observer = m
	addr, srv := gatewaytest.StartServer(t, store, cfg)
	ready := ops.NewReadiness(5e9, discardLogger())
	reg.MustRegister(ops.NewFiguresCollector(srv.Figures, ready.Ready), ops.NewStoreCollector(store, maxTubes, 5e9))
	ready.SetOpen()
	hs := httptest.NewServer(ops.Handler(reg, ready))
	t.Cleanup(hs.Close)
	return &opsServer{addr: addr, http: hs.URL, srv: srv, store: store, ready: ready, reg: reg, metrics: m}
}

// startBinlogServer is startOpsServer over a memory store keeping its binlog in dir (-f0: an
// fsync before every reply).
func startBinlogServer(t *testing.T, dir string) *opsServer {
	t.Helper()
	raw, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: dir, MaxFileSize: 1 << 20}})
	require.NoError(t, err)
	return startOpsServerOn(t, raw, 100, gateway.Config{})
}

// Loopback tells the addresses only this host reaches from those others may reach.
func TestLoopback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:9110", true},
		{"127.0.0.2:9110", true},
		{"[::1]:9110", true},
		{"0.0.0.0:9110", false},
		{"[::]:9110", false},
		{":9110", false},
		{"10.0.0.5:9110", false},
		{"[fd00::5]:9110", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			a, err := net.ResolveTCPAddr("tcp", tt.addr)
			require.NoError(t, err)
			require.Equal(t, tt.want, ops.Loopback(a))
		})
	}
	require.False(t, ops.Loopback(&net.UnixAddr{Name: "/run/x.sock", Net: "unix"}))
}
