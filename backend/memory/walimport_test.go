package memory

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// Imported jobs and their keys outlive a restart on the binlog; a run that died after the
// binlog commit but before its keys reached the key file finds its jobs recognised.
func TestImportKeysOutliveARestart(t *testing.T) {
	dir := t.TempDir()
	open := func() *Backend {
		b, err := Open(Options{Binlog: &binlog.Options{Dir: dir}})
		require.NoError(t, err)
		return b
	}
	ctx := context.Background()
	job := func(id uint64) backend.ImportJob {
		return backend.ImportJob{Key: "old#" + string(rune('a'+id)), ID: id, Tube: "t", State: backend.Buried,
			Priority: 9, TTR: 5 * time.Second, Age: time.Hour, Kicks: 2, Body: []byte{byte(id)}}
	}
	b := open()
	out, err := b.Import(ctx, []backend.ImportJob{job(3), job(8)})
	require.NoError(t, err)
	require.Equal(t, backend.IDKept, out[1].Outcome)
	require.NoError(t, b.Close())

	b = open()
	st, err := b.JobStats(ctx, 8)
	require.NoError(t, err)
	require.Equal(t, backend.Buried, st.State)
	require.Equal(t, uint32(2), st.Kicks)
	require.InDelta(t, float64(time.Hour), float64(st.Age), float64(time.Minute))
	out, err = b.Import(ctx, []backend.ImportJob{job(3), job(8)})
	require.NoError(t, err)
	require.Equal(t, []backend.Imported{{ID: 3, Outcome: backend.AlreadyImported}, {ID: 8, Outcome: backend.AlreadyImported}}, out)
	require.NoError(t, b.Close())

	// The key file lost (a crash before it was written): the jobs are still recognised.
	require.NoError(t, os.Remove(filepath.Join(dir, ImportKeysFile)))
	b = open()
	out, err = b.Import(ctx, []backend.ImportJob{job(3), job(8), job(9)})
	require.NoError(t, err)
	require.Equal(t, []backend.Imported{{ID: 3, Outcome: backend.AlreadyImported}, {ID: 8, Outcome: backend.AlreadyImported}, {ID: 9, Outcome: backend.IDKept}}, out)
	st2, err := b.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(3), st2.BuriedJobs)
	require.NoError(t, b.Close())
}
