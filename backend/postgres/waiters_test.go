package postgres

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func pending(ws ...*waiter) []bool {
	out := make([]bool, len(ws))
	for i, w := range ws {
		out[i] = len(w.ch) > 0
	}
	return out
}

func TestWakeHintsTheLongestWaitingUnhintedWaiters(t *testing.T) {
	t.Parallel()
	ws := newWaiters()
	a, b, c := ws.add("", []string{"t"}), ws.add("", []string{"t", "u"}), ws.add("", []string{"u"})
	ws.wake("t", 1)
	require.Equal(t, []bool{true, false, false}, pending(a, b, c))
	ws.wake("t", 1) // a already holds a hint: the next job goes to b
	require.Equal(t, []bool{true, true, false}, pending(a, b, c))
	ws.wake("u", 0) // all of u
	require.Equal(t, []bool{true, true, true}, pending(a, b, c))
}

func TestRemovePassesOnAHintNotActedUpon(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		hinted   bool
		passOn   bool
		wantNext bool
	}{
		{name: "PendingHintIsPassedOn", hinted: true, wantNext: true},
		{name: "GivingUpPassesOn", passOn: true, wantNext: true},
		{name: "NothingToPassOn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := newWaiters()
			leaving, next := ws.add("", []string{"t"}), ws.add("", []string{"t"})
			if c.hinted {
				leaving.signal()
			}
			ws.remove(leaving, c.passOn)
			require.Equal(t, c.wantNext, len(next.ch) > 0)
			ws.remove(next, false)
			require.Empty(t, ws.byTube)
		})
	}
}

// A job made ready while a reserve is claimed by a put goes to an idle waiter: the claimed one
// acts on a hint only after its put answers.
func TestWakePrefersWaitersNoPutClaimed(t *testing.T) {
	t.Parallel()
	ws := newWaiters()
	a, b := ws.add("a", []string{"t"}), ws.add("b", []string{"t"})
	ws.setIdle(a)
	ws.setIdle(b)
	require.Same(t, a, ws.claim("t"))
	ws.wake("t", 1)
	require.Equal(t, []bool{false, true}, pending(a, b))
	ws.wake("t", 1) // b holds a hint already: only a is left
	require.Equal(t, []bool{true, true}, pending(a, b))
}
