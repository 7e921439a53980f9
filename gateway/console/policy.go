package console

import (
	"context"
	"net/http"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

func (c *Console) getPolicies(w http.ResponseWriter, r *http.Request) {
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		return
	}
	defer cancel()
	ps, err := b.ListPolicies(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	out := Policies{Policies: make([]Policy, len(ps))}
	for i, p := range ps {
		out.Policies[i] = PolicyOf(p)
	}
	writeJSON(w, out)
}

// getPolicy answers both what is set for a pattern and what governs a tube of that name.
func (c *Console) getPolicy(w http.ResponseWriter, r *http.Request) {
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		return
	}
	defer cancel()
	name := r.URL.Query().Get("tube")
	ps, err := b.ListPolicies(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	var out TubePolicy
	for _, p := range ps {
		if p.Tube == name {
			exact := PolicyOf(p)
			out.Policy = &exact
		}
	}
	if p, ok := backend.MatchPolicy(ps, name); ok {
		gov := PolicyOf(p)
		out.Governing = &gov
	}
	writeJSON(w, out)
}

func (c *Console) postPolicy(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if a.Policy == nil {
			return Result{}, badRequest("policy: required")
		}
		if a.Tube != "" && a.Tube != a.Policy.Tube {
			return Result{}, badRequest("tube and policy.tube differ")
		}
		if err := allowedOn(r, a.Policy.Tube, gateway.GrantManage, false); err != nil {
			return Result{}, err
		}
		p := a.Policy.Backend()
		if err := p.Validate(); err != nil {
			return Result{}, badRequest(err.Error())
		}
		return Result{N: 1}, b.SetPolicy(ctx, p)
	})
}

func (c *Console) postPolicyClear(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if err := allowedOn(r, a.Tube, gateway.GrantManage, false); err != nil {
			return Result{}, err
		}
		return Result{N: 1}, b.ClearPolicy(ctx, a.Tube)
	})
}
