package console

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// Under the gateway's principals (Options.Callers) a request acts as the principal its token
// belongs to, or as the anonymous principal without credentials: it sees only the tubes it holds
// a grant on, in its tenant's store, and acts only as its grants allow, as on the beanstalk
// listener (docs/security.md). The console's own Basic Auth user is the operator: every tube of
// the main store.

type callerKey struct{}

// callerOf is the principal r acts as; nil: no principals, or the console's own user.
func callerOf(r *http.Request) *gateway.Caller {
	c, _ := r.Context().Value(callerKey{}).(*gateway.Caller)
	return c
}

// withCaller finds the principal of a request that passed Auth (who is allows' answer).
func (c *Console) withCaller(r *http.Request, who string) (*http.Request, bool) {
	if c.opts.Callers == nil {
		return r, true
	}
	var token []byte
	switch who {
	case "anonymous":
	case "token":
		token = tokenOf(r)
	default:
		return r, true // the console's own user
	}
	caller, ok := c.opts.Callers(token)
	if !ok {
		return r, false
	}
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)), true
}

// tokenOf is the request's token: a Bearer token, or a Basic Auth password.
func tokenOf(r *http.Request) []byte {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return []byte(strings.TrimPrefix(h, "Bearer "))
	}
	_, pass, _ := r.BasicAuth()
	return []byte(pass)
}

// forbidden refuses a request for want of a grant: 403.
type forbidden struct {
	tube string
	need gateway.Grant
}

func (f forbidden) Error() string {
	return fmt.Sprintf("not allowed: needs %s on tube %q", strings.Join(f.need.Names(), " or "), f.tube)
}

// allowedOn is nil when r's caller holds any of need on tube; else forbidden, or, with hide and
// nothing held there, backend.ErrNotFound (a job of a tube it does not see does not exist for it).
func allowedOn(r *http.Request, tube string, need gateway.Grant, hide bool) error {
	caller := callerOf(r)
	if caller == nil {
		return nil
	}
	held := caller.On(tube)
	switch {
	case held&need != 0:
		return nil
	case hide && held == 0:
		return backend.ErrNotFound
	}
	return forbidden{tube: tube, need: need}
}

// allowedOnJob is allowedOn for the tube of job id.
func allowedOnJob(ctx context.Context, r *http.Request, b backend.Backend, id uint64, need gateway.Grant) error {
	if callerOf(r) == nil {
		return nil
	}
	st, err := b.JobStats(ctx, id)
	if err != nil {
		return err
	}
	return allowedOn(r, st.Tube, need, true)
}

// waitingOf gives current-waiting of a tube as r's caller's tenant counts it: its own
// connections only.
func (c *Console) waitingOf(r *http.Request) func(tube string) int64 {
	if caller := callerOf(r); caller != nil {
		return caller.Waiting
	}
	return c.waiting
}

// visibleOverview keeps the tubes r's caller holds a grant on, with the totals of those alone.
func visibleOverview(r *http.Request, ov *Overview) *Overview {
	caller := callerOf(r)
	if caller == nil {
		return ov
	}
	out := &Overview{At: ov.At, Truncated: ov.Truncated, Tubes: []Tube{}}
	for _, t := range ov.Tubes {
		if caller.On(t.Name) == 0 {
			continue
		}
		out.Tubes = append(out.Tubes, t)
		out.Ready += t.Ready
		out.Reserved += t.Reserved
		out.Delayed += t.Delayed
		out.Buried += t.Buried
		out.Total += t.Total
	}
	return out
}

// getWhoAmI answers the caller's own principal and grants.
func (c *Console) getWhoAmI(w http.ResponseWriter, r *http.Request) {
	if caller := callerOf(r); caller != nil {
		writeJSON(w, caller.View())
		return
	}
	writeJSON(w, gateway.PrincipalView{Name: whoOf(r), Grants: []gateway.GrantView{{Tubes: []string{"*"}, Allow: gateway.GrantNames()}}})
}
