// Package gateway speaks the beanstalkd protocol over TCP and keeps its jobs in a
// backend.Backend. It holds all connection-scoped state (the used tube, the watch list,
// producer/worker flags, command counters); every job lives in the backend.
package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/failurelog"
)

// DefaultMaxJobSize is beanstalkd's default -z.
const DefaultMaxJobSize = 65535

// MaxJobSizeLimit is the largest -z beanstalkd accepts (1 GiB); larger values are clamped.
const MaxJobSizeLimit = 1 << 30

// DefaultBackendTimeout is Config.BackendTimeout's default.
const DefaultBackendTimeout = 10 * time.Second

// DefaultHandshakeTimeout is Config.HandshakeTimeout's default.
const DefaultHandshakeTimeout = 10 * time.Second

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("gateway: server closed")

// Config configures a Server.
type Config struct {
	Backend    backend.Backend
	MaxJobSize uint32       // largest put body accepted; 0 means DefaultMaxJobSize
	Logger     *slog.Logger // nil: discard
	// Sessions names this process's connections; nil makes a fresh generator.
	Sessions *backend.SessionIDs
	// BackendTimeout bounds each backend call that does not block by design (everything but a
	// waiting reserve); 0 means DefaultBackendTimeout. A call that runs over answers
	// INTERNAL_ERROR.
	BackendTimeout time.Duration

	// Observer, when set, receives the measurements for metrics.
	Observer Observer
	// TLS, when set, serves every connection over TLS (its GetConfigForClient or
	// GetCertificate can reload certificates without a restart).
	TLS *tls.Config
	// Auth, when set, requires "auth <token>" before anything else; it reports whether token
	// is accepted, comparing in constant time. Not used with Access, whose principals hold
	// the tokens.
	Auth func(token []byte) bool
	// MaxConnections bounds open connections; more are closed at accept. 0: no bound.
	MaxConnections int
	// MaxHandshaking bounds connections in the TLS handshake or not yet authenticated (with
	// TLS or Auth set); more are closed at accept. 0: no bound.
	MaxHandshaking int
	// HandshakeTimeout bounds the TLS handshake and auth from accept; 0 means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Compat is the beanstalkd version answered as: "" or "1.13" (the default), or "1.12" (see
	// compat.go).
	Compat string
	// Access, when set, names the principals, their grants and tenants (docs/security.md):
	// each command is checked against its connection's grants. Nil: every connection may do
	// everything, as in beanstalkd. Replaced with SetAccess.
	Access *Access
}

// Server serves the beanstalk protocol. Its zero value is not usable: use NewServer.
type Server struct {
	cfg      Config
	v112     bool // Compat "1.12"
	log      *slog.Logger
	sessions *backend.SessionIDs
	// failures logs the store's failures without a line per call: while the store is down,
	// every command fails.
	failures *failurelog.Log
	stats    *serverStats
	started  time.Time
	host     host
	draining atomic.Bool
	// inProcess: the store's calls never wait (backend.Backend.InProcess), so no call is
	// bounded by BackendTimeout.
	inProcess bool
	obs       Observer // nil: nothing is measured

	// access is the current Access; nil for a Server made without one, which then never
	// checks a grant (see SetAccess).
	access  atomic.Pointer[Access]
	tenants tenantStates
	// Under Access, connections not yet authenticated are counted in unidentified, shown in no
	// tenant's stats, and totalConnections counts the process's connections (each tenant's
	// set counts those that entered it).
	unidentified     *serverStats
	totalConnections atomic.Uint64

	open        atomic.Int64 // accepted and not yet closed, handshaking ones included
	handshaking atomic.Int64 // in the TLS handshake or not yet authenticated

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	pending   map[net.Conn]struct{} // in the TLS handshake: closed by Shutdown and Close
	closed    bool
	connWG    sync.WaitGroup
}

// NewServer returns a Server over cfg.Backend.
func NewServer(cfg Config) *Server {
	if cfg.MaxJobSize == 0 {
		cfg.MaxJobSize = DefaultMaxJobSize
	}
	if cfg.BackendTimeout == 0 {
		cfg.BackendTimeout = DefaultBackendTimeout
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sessions := cfg.Sessions
	if sessions == nil {
		sessions = backend.NewSessionIDs()
	}
	s := &Server{
		v112:      cfg.Compat == Compat112,
		inProcess: cfg.Backend.InProcess(),
		cfg:       cfg,
		log:       log,
		sessions:  sessions,
		stats:     newServerStats(),
		started:   time.Now(),
		host:      readHost(),
		listeners: map[net.Listener]struct{}{},
		conns:     map[*conn]struct{}{},
		pending:   map[net.Conn]struct{}{},
		obs:       cfg.Observer,
	}
	s.failures = failurelog.New(log, failurelog.Options{Level: slog.LevelError, Counted: "store calls failed"})
	cfg.Backend.ObserveLostReservations(s.closeSessions)
	if cfg.Access != nil {
		s.tenants.init(s)
		s.installAccess(cfg.Access)
	}
	return s
}

// closeSessions closes at once the connections of sessions whose reservations the store may
// have forgotten (see backend.Backend.ObserveLostReservations): their jobs may be handed to
// another worker, and a closed connection tells the worker it holds nothing, as beanstalkd's
// clients know (its reservations return when its session ends).
func (s *Server) closeSessions(ids []backend.SessionID) {
	lost := make(map[backend.SessionID]struct{}, len(ids))
	for _, id := range ids {
		lost[id] = struct{}{}
	}
	n := 0
	s.mu.Lock()
	for c := range s.conns {
		if _, ok := lost[c.sid]; ok {
			c.cancel()
			_ = c.nc.Close()
			n++
		}
	}
	s.mu.Unlock()
	if n > 0 {
		s.log.Warn("closed the connections whose reservations the store may have forgotten", "connections", n)
	}
}

// SetDraining turns drain mode on or off: while draining, put answers DRAINING.
func (s *Server) SetDraining(on bool) { s.draining.Store(on) }

// Draining reports whether drain mode is on.
func (s *Server) Draining() bool { return s.draining.Load() }

// Serve accepts connections on ln until Shutdown or Close, serving each in its own goroutine.
// It always returns a non-nil error: ErrServerClosed after Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, errTooManyFiles) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "in", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
			_ = tc.SetKeepAlive(true)
		}
		gated, ok := s.admit(nc)
		if !ok {
			continue
		}
		if s.cfg.TLS != nil {
			if !s.track(nc, gated, func() { s.pending[nc] = struct{}{} }) {
				return ErrServerClosed
			}
			go s.handshake(nc, gated)
			continue
		}
		if !s.start(nc, gated) {
			return ErrServerClosed
		}
	}
}

// track registers nc (add, under s.mu) as a connection Shutdown waits for, unless the server
// has closed: then it drops nc and returns false.
func (s *Server) track(nc net.Conn, gated bool, add func()) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.drop(nc, gated)
		return false
	}
	add()
	s.connWG.Add(1)
	s.mu.Unlock()
	return true
}

// start serves nc (past any TLS handshake) on its own goroutine; false if the server closed.
func (s *Server) start(nc net.Conn, gated bool) bool {
	c := s.newConn(nc)
	c.gated = gated
	if !s.track(nc, gated, func() { s.conns[c] = struct{}{} }) {
		return false
	}
	go func() {
		defer s.connWG.Done()
		defer s.open.Add(-1)
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	return true
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Shutdown stops accepting, lets each connection answer the commands that have reached it (the
// one it is running, those already received; a reserve waiting for a job answers TIMED_OUT),
// returns every reservation to ready, closes each connection cleanly (see conn.closeSocket), and
// waits for the connections to end or ctx to expire, whichever is first; then Close cuts them.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeAll((*conn).stopAfterCommand)
	done := make(chan struct{})
	go func() { s.connWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.Close()
		return ctx.Err()
	}
}

// Close stops accepting and closes every connection at once, cancelling the backend calls of
// the commands they run; their sessions are still ended (reservations returned) as each
// connection goroutine exits.
func (s *Server) Close() error {
	s.closeAll(func(c *conn) {
		c.cancel()
		_ = c.nc.Close()
	})
	return nil
}

// closeAll marks the server closed, closes its listeners and the connections still in their TLS
// handshake (nothing to finish there), and runs stop on every connection being served.
func (s *Server) closeAll(stop func(c *conn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for ln := range s.listeners {
		_ = ln.Close()
	}
	for c := range s.conns {
		stop(c)
	}
	for nc := range s.pending {
		_ = nc.Close()
	}
}
