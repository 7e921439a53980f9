package memory_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// A crash between a tick's claim (the schedules file, written first) and its job's record in
// the binlog leaves a claim whose job the binlog never got: the reopened store takes the claim
// back, so that the tick is put once, not lost.
func TestAClaimWhoseJobNeverReachedTheBinlogIsTakenBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *memory.Backend {
		b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: dir, NoSync: true}})
		require.NoError(t, err)
		return b
	}
	b := open()
	s := backend.Schedule{Name: "s", Tube: "work", Every: time.Second, TTR: time.Minute, Body: []byte("x")}
	require.NoError(t, b.SetSchedule(ctx, s))
	first := time.Now().UTC().Add(time.Second).Truncate(time.Second)
	id, fired, err := b.FireSchedule(ctx, "s", first)
	require.NoError(t, err)
	require.True(t, fired)
	require.NoError(t, b.Close())

	// The file as a crash after the next claim's write and before its job's commit leaves it.
	path := filepath.Join(dir, memory.SchedulesFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var file []map[string]any
	require.NoError(t, json.Unmarshal(data, &file))
	second := first.Add(time.Second)
	file[0]["prev_tick"], file[0]["last_tick"], file[0]["last_job"] = file[0]["last_tick"], second, id+1
	data, err = json.Marshal(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))

	b = open()
	defer b.Close()
	ss, err := b.ListSchedules(ctx)
	require.NoError(t, err)
	require.Equal(t, first, ss[0].LastTick, "the claim without its job is taken back")
	require.Equal(t, uint64(0), ss[0].LastJob)
	again, fired, err := b.FireSchedule(ctx, "s", second)
	require.NoError(t, err)
	require.True(t, fired, "the tick is put once after all")
	require.Equal(t, id+1, again)
	_, fired, err = b.FireSchedule(ctx, "s", first)
	require.NoError(t, err)
	require.False(t, fired, "the tick whose job the binlog holds stays claimed")
}
