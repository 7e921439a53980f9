package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// holder asks the backend who holds job id.
func (h *harness) holder(id uint64) (backend.SessionID, error) {
	h.Helper()
	return h.b.JobHolder(h.ctx(), id)
}

// A reserved job's holder is the session that reserved it, which names its gateway process; a
// job in any other state has none.
var holderCases = []testCase{
	{"ReservedByTheSessionThatTookIt", func(h *harness) {
		owner, other := h.session(), h.session()
		id := owner.put(job{})
		other.put(job{pri: 1})
		got, err := h.holder(id)
		require.NoError(h, err)
		require.Empty(h, got, "ready: no holder")
		require.Equal(h, id, owner.reserveNow().ID)
		got, err = h.holder(id)
		require.NoError(h, err)
		require.Equal(h, owner.id, got)
		require.Equal(h, owner.id.Process(), got.Process())
		require.NoError(h, h.b.Bury(h.ctx(), owner.id, id, 0))
		got, err = h.holder(id)
		require.NoError(h, err)
		require.Empty(h, got, "buried: no holder")
	}},
	{"NoneOnceTheReservationExpired", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: time.Second})
		c.reserveNow()
		h.advance(2 * time.Second)
		h.requireState(id, backend.Ready) // stats-job applies time, as the console reads it first
		got, err := h.holder(id)
		require.NoError(h, err)
		require.Empty(h, got)
	}},
	{"MissingJob", func(h *harness) {
		_, err := h.holder(1 << 40)
		require.ErrorIs(h, err, backend.ErrNotFound)
	}},
}
