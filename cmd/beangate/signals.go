package main

import (
	"log/slog"
	"os"
	"sync"
	"syscall"

	"github.com/beangate/beangate/gateway"
)

// signalHandler is the one loop over the process's signals, through every phase of serve:
// SIGHUP reloads the TLS and token files and the config file's schedules; SIGUSR1 turns drain mode on for good, as in
// beanstalkd (remembered while the store opens, ignored once a stop has begun); each SIGTERM or
// SIGINT is passed on stops, for the phase at hand to act on — the first asks for a graceful
// stop, a second for a faster one.
type signalHandler struct {
	f     *fleet
	log   *slog.Logger
	stops chan os.Signal
	done  chan struct{}

	mu       sync.Mutex
	srv      *gateway.Server // nil until serving begins
	hup      func()          // what SIGHUP does beyond the fleet's files, once serving
	draining bool            // SIGUSR1 came before serving began
	stopping bool
}

// handleSignals handles signals until close.
func handleSignals(signals <-chan os.Signal, f *fleet, log *slog.Logger) *signalHandler {
	h := &signalHandler{f: f, log: log, stops: make(chan os.Signal, 1), done: make(chan struct{})}
	go h.run(signals)
	return h
}

func (h *signalHandler) run(signals <-chan os.Signal) {
	for {
		select {
		case <-h.done:
			return
		case sig := <-signals:
			switch sig {
			case syscall.SIGHUP:
				h.f.reload()
				h.mu.Lock()
				hup := h.hup
				h.mu.Unlock()
				if hup != nil {
					hup()
				}
			case syscall.SIGUSR1:
				h.drain()
			default:
				h.stopBegun()
				select {
				case h.stops <- sig:
				case <-h.done:
					return
				}
			}
		}
	}
}

func (h *signalHandler) drain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.stopping:
	case h.srv == nil:
		h.draining = true
		h.log.Info("draining: put will answer DRAINING once serving begins")
	default:
		h.setDrainingLocked()
		h.log.Info("draining: put now answers DRAINING until restart")
	}
}

func (h *signalHandler) setDrainingLocked() {
	h.srv.SetDraining(true)
	h.f.readiness.SetDraining()
}

// serving tells that srv serves now: a SIGUSR1 that came before takes effect, and SIGHUP
// calls hup from now on.
func (h *signalHandler) serving(srv *gateway.Server, hup func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.srv = srv
	h.hup = hup
	if h.draining {
		h.setDrainingLocked()
	}
}

// stopBegun tells that the process is stopping: drain mode no longer matters.
func (h *signalHandler) stopBegun() {
	h.mu.Lock()
	h.stopping = true
	h.mu.Unlock()
}

func (h *signalHandler) close() { close(h.done) }
