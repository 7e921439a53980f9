package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// batchCountingStore records how many jobs each store call of puts carried.
type batchCountingStore struct {
	backend.Backend
	mu   sync.Mutex
	runs []int
}

func (s *batchCountingStore) Put(ctx context.Context, p backend.PutParams) (uint64, error) {
	s.note(1)
	return s.Backend.Put(ctx, p)
}

func (s *batchCountingStore) PutBatch(ctx context.Context, ps []backend.PutParams) []backend.PutResult {
	s.note(len(ps))
	return s.Backend.PutBatch(ctx, ps)
}

func (s *batchCountingStore) note(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, n)
}

// Puts a client pipelines reach the store together, and each is answered alone, in order.
func TestPipelinedPutsReachTheStoreTogether(t *testing.T) {
	tests := []struct {
		name     string
		send     string
		want     string
		wantRuns []int
	}{
		{
			name:     "TenPutsInOneWrite",
			send:     strings.Repeat("put 0 0 5 1\r\nx\r\n", 10),
			want:     "INSERTED 1\r\nINSERTED 2\r\nINSERTED 3\r\nINSERTED 4\r\nINSERTED 5\r\nINSERTED 6\r\nINSERTED 7\r\nINSERTED 8\r\nINSERTED 9\r\nINSERTED 10\r\n",
			wantRuns: []int{10},
		},
		{
			name:     "ABadPutSplitsTheRun",
			send:     "put 0 0 5 1\r\nx\r\nput 0 0 5 1\r\ny\r\nput 0 0 5\r\nput 0 0 5 1\r\nz\r\nput 0 0 5 1\r\nw\r\n",
			want:     "INSERTED 1\r\nINSERTED 2\r\nBAD_FORMAT\r\nINSERTED 3\r\nINSERTED 4\r\n",
			wantRuns: []int{2, 2},
		},
		{
			name:     "AnotherCommandSplitsTheRun",
			send:     "put 0 0 5 1\r\nx\r\nput 0 0 5 1\r\ny\r\nlist-tube-used\r\nput 0 0 5 1\r\nz\r\n",
			want:     "INSERTED 1\r\nINSERTED 2\r\nUSING default\r\nINSERTED 3\r\n",
			wantRuns: []int{2, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &batchCountingStore{Backend: newMemory(t)}
			addr, _ := gatewaytest.StartServer(t, store, gateway.Config{})
			nc, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer nc.Close()
			require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
			_, err = fmt.Fprint(nc, tt.send)
			require.NoError(t, err)
			r := bufio.NewReader(nc)
			var got strings.Builder
			for range strings.Count(tt.want, "\r\n") {
				line, err := r.ReadString('\n')
				require.NoError(t, err)
				got.WriteString(line)
			}
			require.Equal(t, tt.want, got.String())
			store.mu.Lock()
			defer store.mu.Unlock()
			require.Equal(t, tt.wantRuns, store.runs)
		})
	}
}
