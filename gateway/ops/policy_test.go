package ops_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway/ops"
)

// Each policy action is counted by tube, policy and action; tubes past the cap share *other*.
func TestPolicyActionsAreCounted(t *testing.T) {
	t.Parallel()
	store := memory.New(memory.Options{})
	t.Cleanup(func() { _ = store.Close() })
	reg := prometheus.NewRegistry()
	ops.ObservePolicyActions(reg, store, 1, nil)
	ctx := context.Background()
	require.NoError(t, store.SetPolicy(ctx, backend.Policy{Tube: "*", Unique: true}))
	for _, tube := range []string{"a", "a", "a", "b", "b", "c"} {
		_, err := store.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Second, Body: []byte("same")})
		require.NoError(t, err)
	}
	got := map[string]float64{}
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := ""
			for _, l := range m.GetLabel() {
				labels += l.GetName() + "=" + l.GetValue() + " "
			}
			got[f.GetName()+" "+labels] = m.GetCounter().GetValue()
		}
	}
	require.Equal(t, map[string]float64{
		"beangate_policy_actions_total action=dedupe policy=unique tube=a ":       2,
		"beangate_policy_actions_total action=dedupe policy=unique tube=*other* ": 1,
	}, got)
}
