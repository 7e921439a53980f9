package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/backendtest"
	"github.com/beangate/beangate/internal/storeprobe"
)

func TestParseFloorConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantOps []int
		wantErr string
	}{
		{"defaults", []string{"-store", "redis://h"}, []int{1, 3, 5, 16}, ""},
		{"ops", []string{"-store", "redis://h", "-ops", "2, 7"}, []int{2, 7}, ""},
		{"no store", nil, nil, "-store is required"},
		{"zero ops", []string{"-store", "redis://h", "-ops", "0"}, nil, "-ops"},
		{"not a number", []string{"-store", "redis://h", "-ops", "5,x"}, nil, "-ops"},
		{"body", []string{"-store", "redis://h", "-body", "70000"}, nil, "-body"},
		{"rounds", []string{"-store", "redis://h", "-rounds", "0"}, nil, "-rounds"},
		{"stray argument", []string{"-store", "redis://h", "extra"}, nil, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFloorConfig(tt.args, io.Discard)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantOps, cfg.opsPerRT)
		})
	}
}

func TestFloorStatements(t *testing.T) {
	st, err := floorStatements(floorPostgresSQL, "s1")
	require.NoError(t, err)
	require.Contains(t, st["put"], "INSERT INTO s1.jobs")
	require.NotContains(t, st["reserve"], "set_config", "a reserve with writes commits with them")
	require.Contains(t, st["reserve alone"], "set_config('synchronous_commit', 'off', true)")
	_, err = floorStatements("-- name: put\nSELECT 1\n", "s1")
	require.ErrorContains(t, err, `no statement "schema"`)
}

func TestRedactURL(t *testing.T) {
	require.Equal(t, "postgres://u:xxx@h/db", redactURL("postgres://u:secret@h/db"))
	require.Equal(t, "redis://h:6379/0", redactURL("redis://h:6379/0"))
	require.Equal(t, "postgres://u@h/db", redactURL("postgres://u@h/db"))
}

// The floor's queue is a queue: what a round trip puts, a later one reserves and deletes, on the
// real servers, and a measured round counts the jobs it ran.
func TestFloorStoresRunJobs(t *testing.T) {
	tests := []struct {
		name, addr, url string
		left            func(t *testing.T, st floorStore) (ready, reserved int64)
	}{
		{"redis", "127.0.0.1:6379", "redis://127.0.0.1:6379/0", func(t *testing.T, st floorStore) (int64, int64) {
			f := st.(*redisFloor)
			ctx := context.Background()
			ready, err := f.c.ZCard(ctx, f.keys[1]).Result()
			require.NoError(t, err)
			reserved, err := f.c.ZCard(ctx, f.keys[2]).Result()
			require.NoError(t, err)
			return ready, reserved
		}},
		{"postgres", "127.0.0.1:5432", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", func(t *testing.T, st floorStore) (int64, int64) {
			f := st.(*postgresFloor)
			var ready, reserved int64
			require.NoError(t, f.conn.QueryRow(context.Background(), "SELECT count(*) FILTER (WHERE state = 1), count(*) FILTER (WHERE state = 3) FROM "+f.schema+".jobs").Scan(&ready, &reserved))
			return ready, reserved
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			st, err := openFloorStore(ctx, tt.url, 100)
			if err != nil {
				backendtest.Unavailable(t, "%s at %s: %v", tt.name, tt.addr, err)
			}
			defer st.Close()

			steps := []struct {
				ops                   string
				wantReady, wantReserv int64
			}{
				{"ppp", 3, 0},
				{"r", 2, 1}, // alone: PostgreSQL's asynchronous commit
				{"rd", 1, 1},
				{"dpr", 1, 1},
				{"rdd", 0, 0},
			}
			for _, s := range steps {
				require.NoError(t, st.roundTrip(ctx, []byte(s.ops)), s.ops)
				ready, reserved := tt.left(t, st)
				require.Equal(t, [2]int64{s.wantReady, s.wantReserv}, [2]int64{ready, reserved}, "after %s", s.ops)
			}

			probe, err := storeprobe.Open(ctx, tt.url)
			require.NoError(t, err)
			defer probe.Close()
			require.NoError(t, st.settle(ctx))
			res, err := floorRoundRun(ctx, st, probe, 5, 200*time.Millisecond)
			require.NoError(t, err)
			require.Positive(t, res.jobs)
			require.Equal(t, res.roundTrips*5/3, res.jobs, "a job is three operations")
			require.Positive(t, res.ownCPU)
		})
	}
}
