package main

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLedgerCatchesADoubleDelivery(t *testing.T) {
	l := newLedger()
	require.NoError(t, l.Inserted(7))
	require.NoError(t, l.Reserved(7))
	err := l.Reserved(7)
	var dd *doubleDeliveryError
	require.ErrorAs(t, err, &dd)
	require.Equal(t, uint64(7), dd.id)
}

func TestLedgerVerify(t *testing.T) {
	type step struct {
		op string // "insert", "reserve", "delete"
		id uint64
	}
	tests := []struct {
		name    string
		steps   []step
		wantErr string // "" means Verify passes
	}{
		{"every job put, reserved and deleted once", []step{
			{"insert", 1}, {"reserve", 1}, {"delete", 1}, {"insert", 2}, {"reserve", 2}, {"delete", 2},
		}, ""},
		{"reserved before the producer read INSERTED", []step{
			{"reserve", 3}, {"delete", 3}, {"insert", 3},
		}, ""},
		{"deleted by id without a reserve (cleanup)", []step{{"insert", 4}, {"delete", 4}}, ""},
		{"a job put but never deleted is lost", []step{
			{"insert", 1}, {"reserve", 1}, {"delete", 1}, {"insert", 2}, {"reserve", 2},
		}, "not deleted exactly once"},
		{"a job nobody INSERTED", []step{{"reserve", 9}, {"delete", 9}}, "without an INSERTED reply"},
		{"nothing at all", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			for _, s := range tt.steps {
				switch s.op {
				case "insert":
					require.NoError(t, l.Inserted(s.id))
				case "reserve":
					require.NoError(t, l.Reserved(s.id))
				case "delete":
					require.NoError(t, l.Deleted(s.id))
				}
			}
			err := l.Verify()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestLedgerRejectsRepeats(t *testing.T) {
	l := newLedger()
	require.NoError(t, l.Inserted(1))
	require.ErrorContains(t, l.Inserted(1), "INSERTED twice")
	require.NoError(t, l.Deleted(1))
	require.ErrorContains(t, l.Deleted(1), "DELETED twice")
}

func TestLedgerUndeletedIDsAndBacklog(t *testing.T) {
	l := newLedger()
	for id := uint64(1); id <= 5; id++ {
		require.NoError(t, l.Inserted(id))
	}
	require.NoError(t, l.Deleted(2))
	require.NoError(t, l.Deleted(4))
	require.ElementsMatch(t, []uint64{1, 3, 5}, l.UndeletedIDs())
	require.Equal(t, int64(3), l.Backlog())
}

func TestLedgerIsSafeForManyConnections(t *testing.T) {
	l := newLedger()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				id := uint64(w*1000 + i + 1)
				_ = l.Inserted(id)
				_ = l.Reserved(id)
				_ = l.Deleted(id)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, l.Verify())
	require.Equal(t, int64(8000), l.inserted.Load())
}
