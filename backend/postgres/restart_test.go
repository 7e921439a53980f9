package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/stretchr/testify/require"
)

// TestDatabaseRestartedMidTest crashes a private PostgreSQL server (pg_ctl stop -m immediate)
// while puts are in flight, and starts it again: while it is down every command fails cleanly
// within the command timeout (INTERNAL_ERROR on the wire, the client connection stays open), the
// backend recovers by itself once it is back, and every put or delete that was acknowledged,
// before or during the outage, survived the crash recovery.
func TestDatabaseRestartedMidTest(t *testing.T) {
	t.Parallel()
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	const timeout = time.Second
	opts := Options{DSN: c.URL(), Schema: "restart", CommandTimeout: timeout, LeaseTTL: 1500 * time.Millisecond, VacuumInterval: -1}
	b, err := New(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	other, err := New(ctx, opts) // a second gateway, for wake-ups after the restart
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })

	addr, _ := gatewaytest.StartServer(t, b, gateway.Config{BackendTimeout: timeout})
	client := gatewaytest.Dial(t, addr)
	client.Do("use wire\r\n", "USING wire\r\n")
	client.Do("put 0 0 60 1\r\na\r\n", "INSERTED {n}\r\n")

	var (
		mu      sync.Mutex
		acked   = map[uint64]bool{} // put and acknowledged
		deleted = map[uint64]bool{} // deleted and acknowledged
		unknown = map[uint64]bool{} // a delete failed: it may or may not have been committed
	)
	put := func(tube string) (uint64, error) {
		id, err := b.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("job")})
		if err == nil {
			mu.Lock()
			acked[id] = true
			mu.Unlock()
		}
		return id, err
	}
	for i := range 40 {
		id, err := put("default")
		require.NoError(t, err)
		if i%4 == 0 {
			require.NoError(t, b.Delete(ctx, "", id))
			deleted[id] = true
		}
	}

	// Writers keep putting, and deleting every other job they put, through the crash and the
	// restart: whatever they saw acknowledged must be there (or gone) afterwards.
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				id, err := put("default")
				if err == nil && (n+w)%2 == 0 {
					err = b.Delete(ctx, "", id)
					mu.Lock()
					if err == nil {
						deleted[id] = true
					} else {
						unknown[id] = true
					}
					mu.Unlock()
				}
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	c.Crash()

	// Down: every kind of call fails cleanly, as an infrastructure error, within the timeout.
	s := backend.SessionID("restart.1")
	for _, probe := range []struct {
		name string
		call func() error
	}{
		{"put", func() error {
			_, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("x")})
			return err
		}},
		{"delete", func() error { return b.Delete(ctx, "", 1) }},
		{"reserve", func() error {
			_, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
			return err
		}},
		{"stats", func() error { _, err := b.Stats(ctx); return err }},
		{"begin session", func() error { return b.BeginSession(ctx, s, backend.SessionInfo{}) }},
	} {
		began := time.Now()
		err := probe.call()
		require.Error(t, err, probe.name)
		require.NotErrorIs(t, err, backend.ErrNotFound, probe.name)
		require.Less(t, time.Since(began), 2*timeout+time.Second, "%s must fail within the command timeout", probe.name)
	}
	// On the wire: INTERNAL_ERROR, and the connection stays open for the next command.
	began := time.Now()
	client.Do("put 0 0 60 1\r\nb\r\n", "INTERNAL_ERROR\r\n")
	require.Less(t, time.Since(began), 2*timeout+time.Second)
	client.Do("stats-tube wire\r\n", "INTERNAL_ERROR\r\n")

	c.Restart()

	// Back: the same client connection and the Backend recover by themselves.
	deadline := time.Now().Add(15 * time.Second)
	for {
		client.Send("put 0 0 60 1\r\nc\r\n")
		reply := client.Expect("{*}\r\n")
		if strings.HasPrefix(reply, "INSERTED ") {
			break
		}
		require.Equal(t, "INTERNAL_ERROR\r\n", reply)
		require.True(t, time.Now().Before(deadline), "the gateway did not recover")
		time.Sleep(50 * time.Millisecond)
	}
	for {
		if _, err := put("default"); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the backend did not recover")
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the writers get through a few more puts
	close(stop)
	writers.Wait()

	mu.Lock()
	defer mu.Unlock()
	require.Greater(t, len(acked), 40)
	for id := range acked {
		_, err := b.Peek(ctx, id)
		if unknown[id] {
			continue
		}
		if deleted[id] {
			require.ErrorIs(t, err, backend.ErrNotFound, "acknowledged delete of job %d undone", id)
		} else {
			require.NoError(t, err, "acknowledged job %d lost", id)
		}
	}

	// Wake-ups work again (the listener reconnected): a reserve waiting on this gateway is woken
	// by a put on the other one.
	requireWokenAcrossBackends(t, ctx, b, other, s, "after")
}
