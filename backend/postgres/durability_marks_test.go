package postgres

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// A durable point covers the reserves completed before it was taken, and only those; a lost
// server reports every session not yet covered, those with a reserve in flight included.
func TestUndurableMarks(t *testing.T) {
	tests := []struct {
		name   string
		events func(u *undurable)
		lost   []string // reported when the server is then lost
	}{
		{"ReservedThenPoint", func(u *undurable) {
			u.begin("a")
			u.endOne("a", true)
			u.durable(u.take())
		}, nil},
		{"PointTakenBeforeTheReserveCompleted", func(u *undurable) {
			k := u.take()
			u.begin("a")
			u.endOne("a", true)
			u.durable(k)
		}, []string{"a"}},
		{"ReserveInFlightAtThePoint", func(u *undurable) {
			u.begin("a")
			k := u.take()
			u.endOne("a", true)
			u.durable(k)
		}, []string{"a"}},
		{"InFlightWhenLost", func(u *undurable) {
			u.begin("a")
		}, []string{"a"}},
		{"ReservedNothing", func(u *undurable) {
			u.begin("a")
			u.endOne("a", false)
		}, nil},
		{"ReservedNothingAfterAReservation", func(u *undurable) {
			u.begin("a")
			u.endOne("a", true)
			u.begin("a")
			u.endOne("a", false)
		}, []string{"a"}},
		{"PointNotCommitted", func(u *undurable) {
			u.begin("a")
			u.endOne("a", true)
			u.take()
		}, []string{"a"}},
		{"OnlyTheCoveredOnes", func(u *undurable) {
			u.begin("a", "b")
			u.end([]string{"a", "b"}, func(int) bool { return true })
			k := u.take()
			u.begin("c")
			u.endOne("c", true)
			u.durable(k)
		}, []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUndurable()
			var got []string
			u.observers = append(u.observers, func(ids []backend.SessionID) {
				for _, id := range ids {
					got = append(got, string(id))
				}
			})
			tt.events(u)
			u.lost()
			slices.Sort(got)
			require.Equal(t, tt.lost, got)
			require.False(t, u.waiting(), "marks left after the report")
		})
	}
}
