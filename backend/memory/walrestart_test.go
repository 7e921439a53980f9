package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// jobView is what a restart must keep of a job: everything but the clock-driven figures and
// what reserve changes, which is not written (as in beanstalkd): the reserve count, and the
// state of a job reserved at the stop, which comes back as its last written change left it.
type jobView struct {
	backend.JobStats
	Body string
}

func snapshot(t *testing.T, b backend.Backend, maxID uint64) map[uint64]jobView {
	ctx := context.Background()
	out := map[uint64]jobView{}
	for id := uint64(1); id <= maxID; id++ {
		st, err := b.JobStats(ctx, id)
		if err == backend.ErrNotFound {
			continue
		}
		require.NoError(t, err)
		j, err := b.Peek(ctx, id)
		require.NoError(t, err)
		st.Age, st.TimeLeft, st.Reserves = 0, 0, 0
		if st.State == backend.Reserved {
			st.State = 0
		}
		out[id] = jobView{*st, string(j.Body)}
	}
	return out
}

// Random puts, reserves, releases (with and without delay), buries, kicks, touches and deletes
// over three tubes, with files so small that rotation and compaction run all the time: a
// backend reopened on the directory holds exactly the same jobs, and goes on with the next id.
func TestBinlogRestartKeepsEveryJobAfterRandomOperations(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			opts := binlog.Options{Dir: dir, MaxFileSize: 2048, NoSync: true}
			b, err := memory.Open(memory.Options{Binlog: &opts})
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(seed, 1))
			const sid = backend.SessionID("p.1")
			require.NoError(t, b.BeginSession(ctx, sid, backend.SessionInfo{}))
			tubes := []string{"default", "a", "b"}
			var ids []uint64 // live ones
			maxID := uint64(0)
			pick := func() uint64 { return ids[rng.IntN(len(ids))] }
			for range 3000 {
				switch op := rng.IntN(12); {
				case op < 3 || len(ids) == 0:
					body := make([]byte, rng.IntN(300))
					for i := range body {
						body[i] = byte(rng.IntN(256))
					}
					delay := time.Duration(0)
					if rng.IntN(4) == 0 {
						delay = time.Hour
					}
					id, err := b.Put(ctx, backend.PutParams{Tube: tubes[rng.IntN(3)], Priority: uint32(rng.IntN(5)), Delay: delay, TTR: time.Minute, Body: body})
					require.NoError(t, err)
					ids = append(ids, id)
					maxID = id
				case op <= 5:
					i := rng.IntN(len(ids))
					if b.Delete(ctx, sid, ids[i]) == nil {
						ids[i] = ids[len(ids)-1]
						ids = ids[:len(ids)-1]
					}
				case op == 6:
					_, _ = b.ReserveJob(ctx, sid, pick())
				case op == 7:
					delay := time.Duration(rng.IntN(2)) * time.Hour
					_ = b.Release(ctx, backend.ReleaseParams{Session: sid, ID: pick(), Priority: uint32(rng.IntN(9)), Delay: delay})
				case op == 8:
					_ = b.Bury(ctx, sid, pick(), uint32(rng.IntN(9)))
				case op == 9:
					_ = b.KickJob(ctx, pick())
				case op == 10:
					_, _ = b.Kick(ctx, tubes[rng.IntN(3)], uint64(rng.IntN(3)))
				default:
					_ = b.Touch(ctx, sid, pick())
				}
			}
			// Churn that leaves nothing behind, so that compaction moves the survivors, whatever
			// their state, and their moved record is their last one.
			for range 1000 {
				id, err := b.Put(ctx, backend.PutParams{Tube: "churn", TTR: time.Minute, Body: make([]byte, 100)})
				require.NoError(t, err)
				require.NoError(t, b.Delete(ctx, sid, id))
				maxID = id
			}
			want := snapshot(t, b, maxID)
			st, err := b.Stats(ctx)
			require.NoError(t, err)
			require.Positive(t, st.Binlog.RecordsMigrated, "compaction ran")
			require.NoError(t, b.Close())

			again, err := memory.Open(memory.Options{Binlog: &opts})
			require.NoError(t, err)
			t.Cleanup(func() { _ = again.Close() })
			got := snapshot(t, again, maxID)
			for id, w := range want {
				if w.State == 0 { // reserved at the stop
					g := got[id]
					require.Contains(t, []backend.State{backend.Ready, backend.Delayed, backend.Buried}, g.State)
					g.State = 0
					got[id] = g
				}
			}
			require.Equal(t, want, got)
			id, err := again.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Second, Body: []byte("x")})
			require.NoError(t, err)
			require.Equal(t, maxID+1, id)
		})
	}
}
