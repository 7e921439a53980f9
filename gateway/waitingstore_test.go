package gateway_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// waitingStore is the memory backend seen as a store kept in a server, whose Reserve waits
// itself: not in the process, and its StartReserve runs Reserve on a goroutine of its own. It
// counts the Reserve calls.
type waitingStore struct {
	backend.Backend
	reserves atomic.Int32
}

func (s *waitingStore) Reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	s.reserves.Add(1)
	return s.Backend.Reserve(ctx, p)
}

func (s *waitingStore) StartReserve(ctx context.Context, p backend.ReserveParams, deliver func(*backend.Job, error)) (*backend.Job, backend.PendingReserve, error) {
	return backend.StartBlockingReserve(ctx, s.Reserve, p, deliver)
}

func (s *waitingStore) InProcess() bool { return false }

// storeKinds are the two ways a store serves a waiting reserve: the memory store's own
// StartReserve, and a store that waits inside Reserve.
var storeKinds = []struct {
	name string
	open func(t *testing.T) backend.Backend
}{
	{"memory", newMemory},
	{"store that waits", func(t *testing.T) backend.Backend { return &waitingStore{Backend: newMemory(t)} }},
}

// startWaitingReserve starts a server over a waitingStore, a worker and a probe connection.
// The worker's first reserve waits for a put from the probe; its second then waits, and the
// function returns once the server counts that one as waiting, with the store's Reserve calls
// made before it.
func startWaitingReserve(t *testing.T) (store *waitingStore, worker net.Conn, probe *probeConn, before int32) {
	t.Helper()
	store = &waitingStore{Backend: newMemory(t)}
	addr, _ := gatewaytest.StartServer(t, store, gateway.Config{})
	dial := func() net.Conn {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
		return nc
	}
	worker = dial()
	wr := bufio.NewReader(worker)
	p := dial()
	probe = &probeConn{p, bufio.NewReader(p)}
	_, err := io.WriteString(worker, "reserve\r\n")
	require.NoError(t, err)
	requireWaiting(t, probe.Conn, probe.r, 1)
	putOne(t, probe)
	line, err := wr.ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "RESERVED "), line)
	_, err = wr.Discard(3) // "x\r\n"
	require.NoError(t, err)
	before = store.reserves.Load()
	_, err = io.WriteString(worker, "reserve\r\n")
	require.NoError(t, err)
	requireWaiting(t, probe.Conn, probe.r, 1)
	return store, worker, probe, before
}

// probeConn is a client connection and its reader.
type probeConn struct {
	net.Conn
	r *bufio.Reader
}

// putOne puts a job with body "x" through probe.
func putOne(t *testing.T, probe *probeConn) {
	t.Helper()
	_, err := io.WriteString(probe, "put 0 0 60 1\r\nx\r\n")
	require.NoError(t, err)
	line, err := probe.r.ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "INSERTED "), line)
}

// A reserve that waits costs such a store one call: no try with timeout 0 before it.
func TestWaitingStoreGetsOneReserveCallPerWait(t *testing.T) {
	t.Parallel()
	store, worker, probe, before := startWaitingReserve(t)
	putOne(t, probe)
	got, err := bufio.NewReader(worker).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "RESERVED 2 1\r\n", got)
	require.Equal(t, before+1, store.reserves.Load())
}

// A client that hangs up while such a reserve waits ends the wait, although the watch for a
// hang-up starts only after a delay.
func TestWaitingStoreNoticesAHangUpDuringTheWait(t *testing.T) {
	t.Parallel()
	_, worker, probe, _ := startWaitingReserve(t)
	require.NoError(t, worker.Close())
	requireWaiting(t, probe.Conn, probe.r, 0)
}
