package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStampRoundTrips(t *testing.T) {
	base := time.Now()
	now := base.Add(1234567 * time.Microsecond)
	body := newBody(100)
	stamp(body, base, now)
	got, ok := sentAt(body, base)
	require.True(t, ok)
	require.Equal(t, now.Sub(base), got.Sub(base))
	require.Equal(t, byte('x'), body[stampLen], "the rest of the body is untouched")
}

func TestShortBodiesCarryNoStamp(t *testing.T) {
	body := newBody(stampLen - 1)
	stamp(body, time.Now(), time.Now())
	require.Equal(t, string(newBody(stampLen-1)), string(body))
	_, ok := sentAt(body, time.Now())
	require.False(t, ok)
}
