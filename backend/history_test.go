package backend

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseEvent(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		unit       time.Duration
		want       JobEvent
		err        string
	}{
		{"Full", "1700000000123 delayed s.1 10.0.0.1:5 2000 retry-delay", time.Millisecond,
			JobEvent{At: time.UnixMilli(1700000000123), Kind: EventDelayed, Session: "s.1", Addr: "10.0.0.1:5", Delay: 2 * time.Second, Policy: PolicyRetryDelay}, ""},
		{"EmptyFields", "1700000000123456 kicked   0 ", time.Microsecond,
			JobEvent{At: time.UnixMicro(1700000000123456), Kind: EventKicked}, ""},
		{"TooFewFields", "1 put s.1", time.Millisecond, JobEvent{}, "3 fields"},
		{"BadTime", "x put s.1 a 0 ", time.Millisecond, JobEvent{}, "time"},
		{"BadDelay", "1 put s.1 a x ", time.Millisecond, JobEvent{}, "delay"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEvent(tt.text, tt.unit)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.True(t, tt.want.At.Equal(got.At), "at %v, want %v", got.At, tt.want.At)
			got.At = tt.want.At
			require.Equal(t, tt.want, got)
		})
	}
}

func TestAppendEventKeepsTheLast(t *testing.T) {
	var h []JobEvent
	for i := range 40 {
		h = AppendEvent(h, JobEvent{Delay: time.Duration(i)})
	}
	require.Len(t, h, MaxJobEvents)
	require.Equal(t, time.Duration(40-MaxJobEvents), h[0].Delay)
	require.Equal(t, time.Duration(39), h[MaxJobEvents-1].Delay)
}
