package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// listen holds one dedicated connection LISTENing on the schema's channel and turns each
// notification (payload: a tube that got ready jobs) into hints for local waiters, reconnecting
// with back-off. ready is closed once the first LISTEN is in place.
func (b *Backend) listen(ready chan struct{}) {
	defer b.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-b.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	backoff := 50 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		err := b.listenOnce(ctx, func() {
			backoff = 50 * time.Millisecond
			if first {
				close(ready)
				first = false
			}
			// Notifications sent while we were not listening are lost: let every waiter retry.
			b.waiters.wakeAll()
		})
		if ctx.Err() != nil {
			return
		}
		b.failures.Background.Failed("postgres: listener connection lost; reconnecting", err, "backoff", backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (b *Backend) listenOnce(ctx context.Context, listening func()) error {
	cctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
	conn, err := pgx.ConnectConfig(cctx, b.pool.Config().ConnConfig.Copy())
	if err == nil {
		_, err = conn.Exec(cctx, "LISTEN "+pgx.Identifier{channelName(b.opts.Schema)}.Sanitize())
	}
	cancel()
	if conn != nil {
		defer conn.Close(context.Background())
	}
	if err != nil {
		return err
	}
	listening()
	// A kick (the database found unreachable: outage.go) drops this connection, which may
	// lead to a server that is gone or cut off, and the loop dials again.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-b.listenKick:
			stop()
		case <-ctx.Done():
		}
	}()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		b.onNotification(n.Payload)
	}
}

// onNotification wakes local waiters for a payload "<origin> <n> <tube>" from another Backend.
func (b *Backend) onNotification(payload string) {
	origin, rest, _ := strings.Cut(payload, " ")
	count, tube, ok := strings.Cut(rest, " ")
	if origin == b.origin {
		return // woken directly after our own commit
	}
	if rest == "P" { // the policies changed (policy_apply.sql)
		ctx, cancel := context.WithTimeout(context.Background(), b.opts.CommandTimeout)
		if err := b.loadPolicies(ctx); err != nil {
			b.failures.Background.Failed("postgres: reloading the policies failed", err)
		}
		cancel()
		b.tickAt(time.Time{})
		b.waiters.wakeAll()
		return
	}
	n, err := strconv.Atoi(count)
	if !ok || err != nil {
		b.waiters.wakeAll()
		return
	}
	b.waiters.wake(tube, n)
}
