// Package console is the web console and its JSON API, served on the ops listener: /ui/ (an
// embedded single page, no CDN, so it works offline) and /api/ (what the page and `beangate ctl`
// use). It reads and acts on the store directly, through the Backend seam, which lists and
// flushes what the protocol can only peek at.
package console

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// Options configure the console.
type Options struct {
	// ReadOnly refuses every action with 403 and tells the page to hide them.
	ReadOnly bool
	// Auth, when it requires anything, guards every path of the console. When it requires
	// nothing, reads stay open and actions are refused as with ReadOnly.
	Auth Auth
	// Backend names the store's kind for the page ("memory", "redis", "postgres").
	Backend string
	// Namespace is where in the store this gateway's jobs are ("prefix beangate", "schema
	// beangate", "binlog /var/lib/beangate"); Store is where the store is, without credentials
	// ("redis://cache:6379/0"). Both only shown.
	Namespace, Store string
	// Gateway is this process's id, the first part of each of its connections' session ids.
	Gateway string
	// Version is beangate's version, shown in the page's header.
	Version string
	// MaxJobSize bounds a put's body, as -z does for the protocol.
	MaxJobSize int
	// CallTimeout bounds each store call of a request.
	CallTimeout time.Duration
	Log         *slog.Logger
	// Callers, under the gateway's principals, finds the principal of a token (nil: the
	// anonymous one): each request then sees and acts as that principal's grants allow
	// (callers.go). Nil: no principals.
	Callers func(token []byte) (*gateway.Caller, bool)
}

// Console serves /ui/ and /api/. Its store is set once open (SetStore); until then the API
// answers 503.
type Console struct {
	opts    Options
	opened  atomic.Pointer[opened]
	history *history
	csrf    string
}

// New returns a console without a store; call Open once the store is open and Run for its
// one-second sampling of the tubes.
func New(opts Options) *Console {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = gateway.DefaultBackendTimeout
	}
	if opts.MaxJobSize <= 0 {
		opts.MaxJobSize = gateway.DefaultMaxJobSize
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Console{opts: opts, history: newHistory(historyLength, maxChartedTubes), csrf: newCSRFToken()}
}

// opened is what the console serves once the store is open.
type opened struct {
	store   backend.Backend
	waiting func(tube string) int64
}

// Open gives the console the open store and how many of this process's connections wait on a
// tube (nil: none counted).
func (c *Console) Open(store backend.Backend, waiting func(tube string) int64) {
	c.opened.Store(&opened{store: store, waiting: waiting})
}

func (c *Console) backend() backend.Backend {
	if p := c.opened.Load(); p != nil {
		return p.store
	}
	return nil
}

// waiting is current-waiting of tube in this process.
func (c *Console) waiting(tube string) int64 {
	if p := c.opened.Load(); p != nil && p.waiting != nil {
		return p.waiting(tube)
	}
	return 0
}

// Run samples the tubes every second until ctx ends: the overview's live figures and the
// charts' last hour.
func (c *Console) Run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		c.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Register adds the console's routes to mux.
func (c *Console) Register(mux *http.ServeMux) {
	mux.Handle("/ui/", c.guard(uiHandler()))
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	api := http.NewServeMux()
	api.HandleFunc("GET /api/info", c.getInfo)
	api.HandleFunc("GET /api/whoami", c.getWhoAmI)
	api.HandleFunc("GET /api/overview", c.getOverview)
	api.HandleFunc("GET /api/tube", c.getTube)
	api.HandleFunc("GET /api/jobs", c.getJobs)
	api.HandleFunc("GET /api/job", c.getJob)
	api.HandleFunc("GET /api/history", c.getHistory)
	api.HandleFunc("GET /api/policies", c.getPolicies)
	api.HandleFunc("GET /api/policy", c.getPolicy)
	api.HandleFunc("GET /api/schedules", c.getSchedules)
	for path, h := range map[string]http.HandlerFunc{
		"/api/kick": c.postKick, "/api/kick-job": c.postKickJob, "/api/delete": c.postDelete,
		"/api/flush": c.postFlush, "/api/pause": c.postPause, "/api/move": c.postMove, "/api/put": c.postPut,
		"/api/policy": c.postPolicy, "/api/policy-clear": c.postPolicyClear,
		"/api/schedule": c.postSchedule, "/api/schedule-clear": c.postScheduleClear,
	} {
		api.Handle("POST "+path, c.action(h))
	}
	mux.Handle("/api/", c.guard(api))
}
