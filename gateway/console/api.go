package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// previewBytes is how much of each body a page of jobs carries.
const previewBytes = 256

// session is the name the console's deletes and puts go under: it holds no reservation, so it
// deletes what any client may delete (not another connection's reserved job).
const session backend.SessionID = "console.0"

// bulkBatch is the jobs per store call of a flush or a move: short calls, so that the store
// serves everyone else between them.
const bulkBatch = 1000

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// fail answers a store error: the seam's sentinels as client errors, the rest as 500.
func fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, backend.ErrNotFound):
		writeError(w, http.StatusNotFound, "not found")
	case errors.Is(err, backend.ErrBadCursor):
		writeError(w, http.StatusBadRequest, "bad cursor")
	case errors.Is(err, backend.ErrBadPolicy), errors.Is(err, backend.ErrBadSchedule):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, backend.ErrPolicyUnsupported):
		writeError(w, http.StatusNotImplemented, err.Error())
	case errors.As(err, new(forbidden)):
		writeError(w, http.StatusForbidden, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// store returns the open store with a context bounded by CallTimeout, or answers 503.
func (c *Console) store(w http.ResponseWriter, r *http.Request) (backend.Backend, context.Context, context.CancelFunc, bool) {
	b := c.backend()
	if caller := callerOf(r); caller != nil && b != nil {
		b = caller.Store
	}
	if b == nil {
		writeError(w, http.StatusServiceUnavailable, "the store is not open yet")
		return nil, nil, nil, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), c.opts.CallTimeout)
	return b, ctx, cancel, true
}

func (c *Console) getInfo(w http.ResponseWriter, _ *http.Request) {
	info := Info{Backend: c.opts.Backend, Namespace: c.opts.Namespace, Store: c.opts.Store, Gateway: c.opts.Gateway,
		Version: c.opts.Version, ReadOnlyReason: c.actionsOff()}
	info.ReadOnly = info.ReadOnlyReason != ""
	if !info.ReadOnly {
		info.CSRF = c.csrf // without actions the token serves nothing: not handed out
	}
	writeJSON(w, info)
}

func (c *Console) getOverview(w http.ResponseWriter, r *http.Request) {
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		return
	}
	defer cancel()
	// The sampled overview is the main store's; another tenant's is read now.
	if ov := c.history.latest(); ov != nil && time.Since(ov.At) < 2*time.Second && b == c.backend() {
		writeJSON(w, visibleOverview(r, ov))
		return
	}
	ov, err := c.readOverview(ctx, b, c.waitingOf(r)) // sampling has not run or stalls: read now
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, visibleOverview(r, ov))
}

func (c *Console) getTube(w http.ResponseWriter, r *http.Request) {
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		return
	}
	defer cancel()
	name := r.URL.Query().Get("name")
	if err := allowedOn(r, name, gateway.GrantInspect, false); err != nil {
		fail(w, err)
		return
	}
	ts, err := b.TubeStats(ctx, name)
	if err != nil {
		fail(w, err)
		return
	}
	t := tubeOf(ts)
	t.Waiting = c.waitingOf(r)(name)
	writeJSON(w, t)
}

func (c *Console) getJobs(w http.ResponseWriter, r *http.Request) {
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		return
	}
	defer cancel()
	q := r.URL.Query()
	st, ok := ParseState(q.Get("state"))
	if !ok {
		writeError(w, http.StatusBadRequest, "state: ready, delayed, reserved or buried")
		return
	}
	if err := allowedOn(r, q.Get("tube"), gateway.GrantInspect, false); err != nil {
		fail(w, err)
		return
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit == 0 {
		limit = 50
	}
	p, err := b.ListJobs(ctx, backend.ListParams{Tube: q.Get("tube"), State: st, After: q.Get("after"), Limit: limit, BodyBytes: previewBytes})
	if err != nil {
		fail(w, err)
		return
	}
	page := Page{Tube: q.Get("tube"), State: st.String(), Jobs: make([]Job, len(p.Jobs)), Next: p.Next}
	for i := range p.Jobs {
		page.Jobs[i] = jobOf(&p.Jobs[i].JobStats, p.Jobs[i].BodySize, p.Jobs[i].Body)
	}
	writeJSON(w, page)
}

func (c *Console) getJob(w http.ResponseWriter, r *http.Request) {
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		return
	}
	defer cancel()
	id, err := strconv.ParseUint(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "id: a job id")
		return
	}
	st, err := b.JobStats(ctx, id)
	if err == nil {
		err = allowedOn(r, st.Tube, gateway.GrantInspect, true)
	}
	if err != nil {
		fail(w, err)
		return
	}
	j, err := b.Peek(ctx, id)
	if err != nil {
		fail(w, err)
		return
	}
	job := jobOf(st, len(j.Body), j.Body)
	if st.State == backend.Reserved {
		// Best effort: the job page is worth showing without its holder.
		if s, err := b.JobHolder(ctx, id); err == nil && s != "" {
			job.Holder, job.HolderGateway = string(s), s.Process()
			job.HolderHere = c.opts.Gateway != "" && job.HolderGateway == c.opts.Gateway
		}
	}
	h, err := b.JobHistory(ctx, id)
	if err != nil {
		fail(w, err)
		return
	}
	job.Events = EventsOf(h)
	writeJSON(w, job)
}

func (c *Console) getHistory(w http.ResponseWriter, r *http.Request) {
	tube := r.URL.Query().Get("tube")
	h, ok := c.history.of(tube)
	// The history is the main store's: a tenant's caller has none.
	if caller := callerOf(r); caller != nil && (caller.Store != c.backend() || caller.On(tube) == 0) {
		ok = false
	}
	if !ok {
		writeError(w, http.StatusNotFound, "no history for this tube")
		return
	}
	writeJSON(w, h)
}

// readAction decodes an action's JSON body (at most the job size and some).
func (c *Console) readAction(w http.ResponseWriter, r *http.Request) (Action, bool) {
	var a Action
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, int64(c.opts.MaxJobSize)*6+4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		writeError(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return a, false
	}
	return a, true
}

// act runs an action's store calls and answers its Result; every outcome is logged.
func (c *Console) act(w http.ResponseWriter, r *http.Request, do func(ctx context.Context, b backend.Backend, a Action) (Result, error)) {
	a, ok := c.readAction(w, r)
	if !ok {
		c.logAction(r, nil, "refused", "bad request body")
		return
	}
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		c.logAction(r, &a, "failed", "the store is not open yet")
		return
	}
	defer cancel()
	res, err := do(ctx, b, a)
	if err != nil {
		var bad badRequest
		if errors.As(err, &bad) {
			c.logAction(r, &a, "refused", string(bad))
			writeError(w, http.StatusBadRequest, string(bad))
			return
		}
		if errors.As(err, new(forbidden)) {
			c.logAction(r, &a, "refused", err.Error())
			fail(w, err)
			return
		}
		c.logAction(r, &a, "failed", err.Error(), "n", res.N)
		fail(w, err)
		return
	}
	attrs := []any{"n", res.N}
	if res.ID != 0 {
		attrs = append(attrs, "new_id", res.ID)
	}
	c.logAction(r, &a, "done", "", attrs...)
	writeJSON(w, res)
}

// logAction records one action at Info: who (the Basic Auth user, "token" or "anonymous"; never
// a password or token), from where (the peer's address; an X-Forwarded-For header is logged as
// forwarded_for exactly as received: any client can set it, so it is a hint, not an identity),
// the action and its target. Never a body: a put logs its size.
func (c *Console) logAction(r *http.Request, a *Action, outcome, why string, extra ...any) {
	attrs := []any{"action", strings.TrimPrefix(r.URL.Path, "/api/"), "outcome", outcome,
		"who", whoOf(r), "from", r.RemoteAddr}
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		attrs = append(attrs, "forwarded_for", xff)
	}
	if a != nil {
		for _, f := range []struct {
			key string
			val any
			set bool
		}{
			{"tube", a.Tube, a.Tube != ""}, {"to", a.To, a.To != ""}, {"state", a.State, a.State != ""},
			{"id", a.ID, a.ID != 0}, {"bound", a.Bound, a.Bound != 0},
			{"seconds", a.Seconds, strings.HasSuffix(r.URL.Path, "/pause")},
			{"pri", a.Pri, strings.HasSuffix(r.URL.Path, "/put")}, {"delay", a.Delay, a.Delay != 0},
			{"ttr", a.TTR, a.TTR != 0}, {"body_bytes", len(a.Body), strings.HasSuffix(r.URL.Path, "/put")},
			{"policy", a.Policy, a.Policy != nil},
			{"schedule", scheduleName(a), a.Schedule != nil || a.Name != ""},
		} {
			if f.set {
				attrs = append(attrs, f.key, f.val)
			}
		}
	}
	attrs = append(attrs, extra...)
	if why != "" {
		attrs = append(attrs, "err", why)
	}
	c.opts.Log.Info("console action", attrs...)
}

type badRequest string

func (b badRequest) Error() string { return string(b) }

func (c *Console) postKick(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if err := allowedOn(r, a.Tube, gateway.GrantManage, false); err != nil {
			return Result{}, err
		}
		n, err := b.Kick(ctx, a.Tube, a.Bound)
		return Result{N: n}, err
	})
}

func (c *Console) postKickJob(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if err := allowedOnJob(ctx, r, b, a.ID, gateway.GrantManage); err != nil {
			return Result{}, err
		}
		return Result{N: 1}, b.KickJob(ctx, a.ID)
	})
}

func (c *Console) postDelete(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if err := allowedOnJob(ctx, r, b, a.ID, gateway.GrantManage); err != nil {
			return Result{}, err
		}
		return Result{N: 1}, b.Delete(ctx, session, a.ID)
	})
}

func (c *Console) postPause(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if err := allowedOn(r, a.Tube, gateway.GrantManage, false); err != nil {
			return Result{}, err
		}
		if a.Seconds < 0 || a.Seconds > 1<<32-1 {
			return Result{}, badRequest("seconds: 0 (unpause) to 4294967295")
		}
		return Result{}, b.PauseTube(ctx, a.Tube, time.Duration(a.Seconds*float64(time.Second)))
	})
}

// bulkStates is the states a flush or move acts on: the one named, or every state but reserved
// (reserved jobs stay with their holders).
func bulkStates(name string) ([]backend.State, error) {
	if name == "" {
		return []backend.State{backend.Ready, backend.Delayed, backend.Buried}, nil
	}
	st, ok := ParseState(name)
	if !ok || st == backend.Reserved {
		return nil, badRequest("state: ready, delayed or buried (reserved jobs stay with their holders)")
	}
	return []backend.State{st}, nil
}

// eachState runs a flush's or a move's call for each state and adds up the jobs they acted on;
// a failure still reports how many were done before it.
func eachState(states []backend.State, call func(backend.State) (int, error)) (Result, error) {
	var total int
	for _, st := range states {
		n, err := call(st)
		total += n
		if err != nil {
			return Result{N: uint64(total)}, err
		}
	}
	return Result{N: uint64(total)}, nil
}

// postFlush deletes a tube's jobs in batches of bulkBatch; the request's own context bounds the
// whole (each call is bounded by the store).
func (c *Console) postFlush(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(_ context.Context, b backend.Backend, a Action) (Result, error) {
		if err := allowedOn(r, a.Tube, gateway.GrantManage, false); err != nil {
			return Result{}, err
		}
		states, err := bulkStates(a.State)
		if err != nil {
			return Result{}, err
		}
		return eachState(states, func(st backend.State) (int, error) {
			return backend.DeleteAll(r.Context(), b, a.Tube, st, bulkBatch)
		})
	})
}

func (c *Console) postMove(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(_ context.Context, b backend.Backend, a Action) (Result, error) {
		if !gateway.ValidTubeName(a.To) {
			return Result{}, badRequest("to: not a valid tube name")
		}
		for _, tube := range []string{a.Tube, a.To} {
			if err := allowedOn(r, tube, gateway.GrantManage, false); err != nil {
				return Result{}, err
			}
		}
		states, err := bulkStates(a.State)
		if err != nil {
			return Result{}, err
		}
		return eachState(states, func(st backend.State) (int, error) {
			return backend.MoveAll(r.Context(), b, a.Tube, a.To, st, bulkBatch)
		})
	})
}

func (c *Console) postPut(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		switch {
		case !gateway.ValidTubeName(a.Tube):
			return Result{}, badRequest("tube: not a valid tube name")
		case len(a.Body) > c.opts.MaxJobSize:
			return Result{}, badRequest("body: larger than the maximum job size")
		case a.Delay < 0 || a.TTR < 0 || a.Delay > 1<<32-1 || a.TTR > 1<<32-1:
			return Result{}, badRequest("delay, ttr: 0 to 4294967295 seconds")
		}
		if err := allowedOn(r, a.Tube, gateway.GrantPut, false); err != nil {
			return Result{}, err
		}
		ttr := max(time.Duration(a.TTR*float64(time.Second)), time.Second) // as the protocol: TTR 0 is 1 s
		id, err := b.Put(ctx, backend.PutParams{Tube: a.Tube, Priority: a.Pri, Delay: time.Duration(a.Delay * float64(time.Second)), TTR: ttr, Body: []byte(a.Body)})
		return Result{N: 1, ID: id}, err
	})
}

// scheduleName names an action's schedule for the log: its name, never its body.
func scheduleName(a *Action) string {
	if a.Schedule != nil {
		return a.Schedule.Name
	}
	return a.Name
}
