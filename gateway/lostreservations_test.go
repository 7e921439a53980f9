package gateway_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// lossyStore is the memory store with a hand on ObserveLostReservations: the test reports lost
// reservations as a store whose server crashed would. It records the sessions begun, in order.
type lossyStore struct {
	backend.Backend
	mu       sync.Mutex
	report   []func([]backend.SessionID)
	sessions []backend.SessionID
}

func (s *lossyStore) ObserveLostReservations(f func([]backend.SessionID)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.report = append(s.report, f)
}

func (s *lossyStore) BeginSession(ctx context.Context, id backend.SessionID, info backend.SessionInfo) error {
	s.mu.Lock()
	s.sessions = append(s.sessions, id)
	s.mu.Unlock()
	return s.Backend.BeginSession(ctx, id, info)
}

func (s *lossyStore) lose(ids ...backend.SessionID) {
	s.mu.Lock()
	report := s.report
	s.mu.Unlock()
	for _, f := range report {
		f(ids)
	}
}

// The sessions a store reports lost have their connections closed at once, which returns their
// reservations; the others are left alone.
func TestLostReservationsCloseTheirConnections(t *testing.T) {
	tests := []struct {
		name      string
		lost      func(holder, other backend.SessionID) []backend.SessionID
		holderEnd bool // the holder's connection is closed
	}{
		{"Holder", func(h, _ backend.SessionID) []backend.SessionID { return []backend.SessionID{h} }, true},
		{"UnknownSession", func(_, _ backend.SessionID) []backend.SessionID { return []backend.SessionID{"nobody"} }, false},
		{"None", func(_, _ backend.SessionID) []backend.SessionID { return nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &lossyStore{Backend: newMemory(t)}
			addr, _ := gatewaytest.StartServer(t, store, gateway.Config{})
			holder := gatewaytest.Dial(t, addr)
			holder.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
			holder.Do("reserve-with-timeout 0\r\n", "RESERVED 1 1\r\nx\r\n")
			other := gatewaytest.Dial(t, addr)
			other.Do("reserve-with-timeout 0\r\n", "TIMED_OUT\r\n")
			store.mu.Lock()
			require.Len(t, store.sessions, 2)
			h, o := store.sessions[0], store.sessions[1]
			store.mu.Unlock()

			store.lose(tt.lost(h, o)...)
			if !tt.holderEnd {
				holder.ExpectNothing()
				holder.Do("touch 1\r\n", "TOUCHED\r\n")
				other.Do("reserve-with-timeout 0\r\n", "TIMED_OUT\r\n")
				return
			}
			holder.ExpectClosed()
			other.Do("reserve-with-timeout 1\r\n", "RESERVED 1 1\r\nx\r\n")
		})
	}
}
