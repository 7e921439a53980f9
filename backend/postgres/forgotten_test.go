package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/faulttest"
)

// forgottenPort is the private server of TestForgottenReservation (one port).
const forgottenPort = 12558

// A reserve is committed without waiting for the WAL flush. On this server the WAL writer waits
// 10 s between rounds (and nothing vacuums), so a reservation stays in the server's memory until
// a commit that waits for the flush writes it out, and a crash before that forgets it: its job
// is ready again after the restart, and a worker on another gateway gets it. The worker that
// reserved it must have been disconnected by then (as a closed connection, its session is over
// and it holds nothing). A reservation a durable point (the gateway's own, or a put) flushed
// before the crash survives it: nobody else gets the job, and its worker deletes it.
func TestForgottenReservation(t *testing.T) {
	server := faulttest.StartPG(t, forgottenPort, "wal_writer_delay = 10s", "autovacuum = off")
	tests := []struct {
		name         string
		durableEvery time.Duration
		// between runs after the reserve and before the crash.
		between   func(t *testing.T, b *Backend, producer *gatewaytest.Client)
		forgotten bool
	}{
		{"NothingDurableBetween", time.Hour, func(*testing.T, *Backend, *gatewaytest.Client) {}, true},
		{"DurablePointBetween", 50 * time.Millisecond, func(t *testing.T, b *Backend, _ *gatewaytest.Client) {
			waitDurable(t, b)
		}, false},
		{"PutBetween", time.Hour, func(_ *testing.T, _ *Backend, producer *gatewaytest.Client) {
			producer.Do("use elsewhere\r\n", "USING elsewhere\r\n")
			producer.Do("put 0 0 60 1\r\ny\r\n", "INSERTED {n}\r\n")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			query := "schema=" + strings.ToLower(tt.name) + "&command_timeout=3s&vacuum_interval=-1s"
			open := func() *Backend {
				opts, err := ParseURL(server.Primary.URL("127.0.0.1", query))
				require.NoError(t, err)
				b, err := New(context.Background(), opts)
				require.NoError(t, err)
				t.Cleanup(func() { _ = b.Close() })
				setDurableEvery(b, tt.durableEvery)
				return b
			}
			b1 := open()
			gw1, gw2 := faulttest.StartGateway(t, "gw1", b1), faulttest.StartGateway(t, "gw2", open())

			producer := gatewaytest.Dial(t, gw1.Addr)
			id := strings.TrimSuffix(strings.TrimPrefix(producer.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n"), "INSERTED "), "\r\n")
			holder := gatewaytest.Dial(t, gw1.Addr)
			holder.Do("reserve-with-timeout 0\r\n", "RESERVED "+id+" 1\r\nx\r\n")
			tt.between(t, b1, producer)

			server.Primary.StopImmediate()
			server.Primary.Start()

			other := gatewaytest.Dial(t, gw2.Addr)
			if tt.forgotten {
				// The holder is disconnected as soon as its gateway sees the server gone,
				// before any reserve can reach the restarted one.
				holder.ExpectClosed()
				require.Equal(t, "RESERVED "+id+" 1\r\nx\r\n", retry(t, other, "reserve-with-timeout 5\r\n"),
					"the reservation survived the crash: the test did not keep it from the disk")
				return
			}
			require.Equal(t, "TIMED_OUT\r\n", retry(t, other, "reserve-with-timeout 1\r\n"),
				"the job was handed out again: its reservation was forgotten")
			require.Equal(t, "DELETED\r\n", retry(t, holder, "delete "+id+"\r\n"))
		})
	}
}

// retry sends cmd until its reply is not INTERNAL_ERROR (the gateway reconnecting), for up to
// 20 s, and returns the reply.
func retry(t *testing.T, c *gatewaytest.Client, cmd string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := c.Do(cmd, "{*}\r\n")
		if got != "INTERNAL_ERROR\r\n" {
			if strings.HasPrefix(got, "RESERVED ") {
				got += c.Expect("{*}\r\n")
			}
			return got
		}
		require.True(t, time.Now().Before(deadline), fmt.Sprintf("%q still fails", cmd))
		time.Sleep(100 * time.Millisecond)
	}
}

// setDurableEvery sets how long after a reserve b commits a durable point of its own.
func setDurableEvery(b *Backend, d time.Duration) { b.durableEveryTest.Store(int64(d)) }

// waitDurable waits until b knows every reservation it acknowledged durable.
func waitDurable(t *testing.T, b *Backend) {
	require.Eventually(t, func() bool { return !b.undurable.waiting() }, 5*time.Second, 10*time.Millisecond)
}
