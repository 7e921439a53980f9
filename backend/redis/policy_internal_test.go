package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// A policy round-trips through its text, and one written before retry delays existed (seven
// fields) still reads.
func TestPolicyTextRoundTripsAndReadsTheOlderForm(t *testing.T) {
	p := backend.Policy{Tube: "t", MaxReserves: 3, ExpireAfter: time.Hour, ExpireAction: backend.ExpireBury,
		MaxReserved: 2, Rate: 0.5, Burst: 4, Unique: true, RetryDelay: 1500 * time.Millisecond, RetryDelayMax: time.Minute}
	got, err := decodePolicy("t", encodePolicy(p))
	require.NoError(t, err)
	require.Equal(t, p, got)

	got, err = decodePolicy("t", "3 0 0 0 0 0 1")
	require.NoError(t, err)
	require.Equal(t, backend.Policy{Tube: "t", MaxReserves: 3, Unique: true}, got)

	_, err = decodePolicy("t", "3 0 0 0 0 0 1 5")
	require.Error(t, err)
}
