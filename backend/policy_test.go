package backend

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, tube string
		want          bool
	}{
		{"email-*", "email-", true},
		{"email-*", "email-bulk", true},
		{"email-*", "email", false},
		{"*", "", true},
		{"*", "anything/at;all", true},
		{"*-dlq", "a-b-dlq", true},
		{"*-dlq", "a-dlq-x", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a*b*c", "abcbc", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	} {
		require.Equal(t, c.want, GlobMatch(c.pattern, c.tube), "%q ~ %q", c.pattern, c.tube)
	}
}

func TestMatchPolicyTakesTheMostSpecific(t *testing.T) {
	ps := []Policy{
		{Tube: "*", Rate: 1},
		{Tube: "email-*", Rate: 2},
		{Tube: "email-v*", Rate: 3},
		{Tube: "*-vip", Rate: 4},
		{Tube: "email-vip", Rate: 5},
		{Tube: "e*l-*", Rate: 6},
	}
	for tube, want := range map[string]float64{
		"sms":       1,
		"email-x":   2, // "email-*" (6 literals) beats "e*l-*" (3)
		"email-vx":  3,
		"sms-vip":   4,
		"email-vip": 5, // exact beats every glob
		"eel-x":     6,
	} {
		p, ok := MatchPolicy(ps, tube)
		require.True(t, ok, tube)
		require.Equal(t, want, p.Rate, tube)
	}
	_, ok := MatchPolicy(ps[1:], "sms")
	require.False(t, ok)

	// Equal literal counts: fewer stars, then the smaller pattern.
	p, _ := MatchPolicy([]Policy{{Tube: "a*b*"}, {Tube: "ab*"}}, "abx")
	require.Equal(t, "ab*", p.Tube)
	p, _ = MatchPolicy([]Policy{{Tube: "a*b"}, {Tube: "*xb"}}, "axb")
	require.Equal(t, "*xb", p.Tube)
}

func TestPolicyValidate(t *testing.T) {
	require.NoError(t, Policy{Tube: "email-*", MaxReserves: 5, ExpireAfter: time.Hour, ExpireAction: ExpireBury,
		MaxReserved: 3, Rate: 50, Burst: 10, Unique: true, RetryDelay: time.Second, RetryDelayMax: 10 * time.Minute}.Validate())
	require.NoError(t, Policy{Tube: "quiet"}.Validate())
	for _, p := range []Policy{
		{},
		{Tube: "-x"},
		{Tube: "sp ace"},
		{Tube: string(make([]byte, MaxPolicyTubeLen+1))},
		{Tube: "t", ExpireAfter: -1},
		{Tube: "t", ExpireAfter: time.Second, ExpireAction: "keep"},
		{Tube: "t", ExpireAction: ExpireBury},
		{Tube: "t", Rate: -1},
		{Tube: "t", Burst: 2},
		{Tube: "t", RetryDelay: -time.Second},
		{Tube: "t", RetryDelay: MaxRetryDelay + 1},
		{Tube: "t", RetryDelayMax: time.Minute},
		{Tube: "t", RetryDelay: time.Minute, RetryDelayMax: time.Second},
		{Tube: "t", RetryDelay: time.Second, RetryDelayMax: MaxRetryDelay + 1},
	} {
		require.ErrorIs(t, p.Validate(), ErrBadPolicy, "%+v", p)
	}
}

func TestRetryBackoffDoublesUpToItsCap(t *testing.T) {
	for _, c := range []struct {
		p        Policy
		reserves uint32
		want     time.Duration
	}{
		{Policy{}, 3, 0},
		{Policy{RetryDelay: time.Second}, 0, time.Second},
		{Policy{RetryDelay: time.Second}, 1, time.Second},
		{Policy{RetryDelay: time.Second}, 2, 2 * time.Second},
		{Policy{RetryDelay: time.Second}, 3, 4 * time.Second},
		{Policy{RetryDelay: time.Second, RetryDelayMax: 3 * time.Second}, 3, 3 * time.Second},
		{Policy{RetryDelay: time.Second, RetryDelayMax: 10 * time.Minute}, 11, 10 * time.Minute},
		{Policy{RetryDelay: time.Second, RetryDelayMax: time.Second}, 1, time.Second},
		{Policy{RetryDelay: time.Second}, 40, MaxRetryDelay},
		{Policy{RetryDelay: MaxRetryDelay}, math.MaxUint32, MaxRetryDelay},
		{Policy{RetryDelay: 3 * time.Millisecond}, 64, MaxRetryDelay},
	} {
		require.Equal(t, c.want, c.p.RetryBackoff(c.reserves), "%+v after %d reserves", c.p, c.reserves)
	}
}
