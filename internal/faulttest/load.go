package faulttest

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"

	"github.com/beangate/beangate/backend"
)

// Gateway is a gateway the load talks to.
type Gateway struct {
	Name, Addr string
	Backend    backend.Backend // its store, when started in this process (StartGateway)
}

// Load is steady put/reserve/delete traffic through real beanstalk clients (go-beanstalk over
// TCP), every reply recorded in a Ledger. Each gateway gets its producers and workers; a client
// whose connection breaks or whose reply does not come within OpTimeout closes its connection
// and dials again (a new session: its reservations go back, which the ledger knows).
type Load struct {
	Ledger    *Ledger
	Gateways  []Gateway
	Producers int           // per gateway (default 1; negative: none)
	Workers   int           // per gateway (default 2; negative: none)
	TTR       time.Duration // of every job (default the ledger's)
	Pace      time.Duration // between one producer's puts (default 5 ms)
	Body      int           // bytes of padding added to each job's body
	OpTimeout time.Duration // a reply later than this is a hung gateway (default 30 s)
	Tube      string

	stop chan struct{}
	wg   sync.WaitGroup
}

// seq numbers the jobs' bodies, and holders the connections, of every Load in the process, so
// that several loads can share a ledger.
var seq, holders atomic.Uint64

func (l *Load) defaults() {
	if l.Producers == 0 {
		l.Producers = 1
	}
	if l.Workers == 0 {
		l.Workers = 2
	}
	if l.TTR == 0 {
		l.TTR = l.Ledger.ttr
	}
	if l.Pace == 0 {
		l.Pace = 5 * time.Millisecond
	}
	if l.OpTimeout == 0 {
		l.OpTimeout = 30 * time.Second
	}
	if l.Tube == "" {
		l.Tube = "faults"
	}
}

// Start starts the clients.
func (l *Load) Start() {
	l.defaults()
	l.stop = make(chan struct{})
	for _, gw := range l.Gateways {
		for range max(l.Producers, 0) {
			l.wg.Go(func() { l.produce(gw) })
		}
		for range max(l.Workers, 0) {
			l.wg.Go(func() { l.work(gw) })
		}
	}
}

// Stop stops the clients and closes their connections (their sessions end: what they held
// goes back to ready).
func (l *Load) Stop() {
	close(l.stop)
	l.wg.Wait()
}

func (l *Load) stopped() bool { return closed(l.stop) }

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// client is one connection, dialled again after it broke.
type client struct {
	l      *Load
	gw     Gateway
	conn   net.Conn
	bc     *beanstalk.Conn
	holder string // this connection's name in the ledger
}

// dial connects to gw until it succeeds or stop is closed (nil: never).
func (l *Load) dial(gw Gateway, watch bool, stop <-chan struct{}) *client {
	for !closed(stop) {
		conn, err := net.DialTimeout("tcp", gw.Addr, 2*time.Second)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		c := &client{l: l, gw: gw, conn: conn, bc: beanstalk.NewConn(conn),
			holder: fmt.Sprintf("%s/c%d", gw.Name, holders.Add(1))}
		// use/watch are answered by the gateway alone; they never fail on the store.
		_ = conn.SetDeadline(time.Now().Add(l.OpTimeout))
		if watch {
			ts := beanstalk.NewTubeSet(c.bc, l.Tube)
			c.bc.TubeSet = *ts
		}
		c.bc.Tube = *beanstalk.NewTube(c.bc, l.Tube)
		return c
	}
	return nil
}

// close ends the connection; the ledger learns that its holder is gone.
func (c *client) close() {
	_ = c.conn.Close()
	c.l.Ledger.Gone(c.holder, time.Now())
}

// broken tells an error that leaves the connection unusable (a broken socket, a reply that
// did not come in time) from a reply of the server.
func broken(err error) bool {
	var ce beanstalk.ConnError
	if errors.As(err, &ce) {
		return !isReply(ce.Err)
	}
	return true
}

func isReply(err error) bool {
	for _, e := range []error{beanstalk.ErrInternal, beanstalk.ErrOOM, beanstalk.ErrTimeout, beanstalk.ErrNotFound,
		beanstalk.ErrDeadline, beanstalk.ErrDraining, beanstalk.ErrBuried} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (l *Load) produce(gw Gateway) {
	c := l.dial(gw, false, l.stop)
	for c != nil && !l.stopped() {
		body := fmt.Sprintf("job-%d", seq.Add(1))
		if l.Body > 0 {
			body += " " + strings.Repeat("x", l.Body)
		}
		sent := time.Now()
		l.Ledger.PutSent(body, sent)
		_ = c.conn.SetDeadline(sent.Add(l.OpTimeout))
		id, err := c.bc.Put([]byte(body), 1, 0, l.TTR)
		at := time.Now()
		switch {
		case err == nil:
			l.Ledger.PutAcked(gw.Name, body, id, at)
		case broken(err):
			l.Ledger.Failed(gw.Name, sent, at)
			c.close()
			c = l.dial(gw, false, l.stop)
			continue
		default:
			l.Ledger.Failed(gw.Name, sent, at)
		}
		select {
		case <-l.stop:
		case <-time.After(l.Pace):
		}
	}
	if c != nil {
		c.close()
	}
}

func (l *Load) work(gw Gateway) {
	c := l.dial(gw, true, l.stop)
	for c != nil && !l.stopped() {
		sent := time.Now()
		_ = c.conn.SetDeadline(sent.Add(l.OpTimeout))
		id, body, err := c.bc.Reserve(time.Second)
		at := time.Now()
		if err != nil {
			if errors.Is(err, beanstalk.ErrTimeout) || errors.Is(err, beanstalk.ErrDeadline) {
				continue
			}
			l.Ledger.Failed(gw.Name, sent, at)
			if broken(err) {
				c.close()
				c = l.dial(gw, true, l.stop)
			} else {
				time.Sleep(20 * time.Millisecond) // the store is failing: do not spin
			}
			continue
		}
		l.Ledger.Reserved(c.holder, gw.Name, id, string(body), at)
		sent = time.Now()
		l.Ledger.DeleteSent(id)
		_ = c.conn.SetDeadline(sent.Add(l.OpTimeout))
		err = c.bc.Delete(id)
		at = time.Now()
		switch {
		case err == nil:
			l.Ledger.Deleted(c.holder, gw.Name, id, sent, at)
		case errors.Is(err, beanstalk.ErrNotFound):
			// Its TTR ran out, or its session was ended: another worker has it or will.
		case broken(err):
			l.Ledger.Failed(gw.Name, sent, at)
			c.close()
			c = l.dial(gw, true, l.stop)
		default:
			l.Ledger.Failed(gw.Name, sent, at)
		}
	}
	if c != nil {
		c.close()
	}
}

// Drain reserves and deletes, through gw, every job left in the tube until none comes within
// wait (at least the TTR, so that reservations whose holder vanished come back first), each
// recorded in the ledger. Stop the load first.
func (l *Load) Drain(t testing.TB, gw Gateway, wait time.Duration) int {
	t.Helper()
	l.defaults()
	c := l.dial(gw, true, nil)
	defer c.close()
	n := 0
	for {
		_ = c.conn.SetDeadline(time.Now().Add(wait + l.OpTimeout))
		id, body, err := c.bc.Reserve(wait)
		if errors.Is(err, beanstalk.ErrTimeout) {
			return n
		}
		if err != nil {
			t.Fatalf("drain through %s: reserve: %v", gw.Name, err)
		}
		l.Ledger.Reserved(c.holder, gw.Name, id, string(body), time.Now())
		sent := time.Now()
		l.Ledger.DeleteSent(id)
		if err := c.bc.Delete(id); err != nil {
			t.Fatalf("drain through %s: delete %d: %v", gw.Name, id, err)
		}
		l.Ledger.Deleted(c.holder, gw.Name, id, sent, time.Now())
		n++
	}
}

// Names lists the gateways' names.
func (l *Load) Names() string {
	var names []string
	for _, g := range l.Gateways {
		names = append(names, g.Name)
	}
	return strings.Join(names, ", ")
}

// Holder is a worker that reserved jobs and keeps them: the jobs a test watches while their
// gateway is in trouble.
type Holder struct {
	c   *client
	ids []uint64
}

// Hold reserves n jobs through gw (waiting up to 5 s for each) and keeps them.
func (l *Load) Hold(t testing.TB, gw Gateway, n int) *Holder {
	t.Helper()
	l.defaults()
	c := l.dial(gw, true, nil)
	h := &Holder{c: c}
	for range n {
		_ = c.conn.SetDeadline(time.Now().Add(l.OpTimeout))
		id, body, err := c.bc.Reserve(5 * time.Second)
		if err != nil {
			t.Fatalf("holder through %s: reserve: %v", gw.Name, err)
		}
		l.Ledger.Reserved(c.holder, gw.Name, id, string(body), time.Now())
		h.ids = append(h.ids, id)
	}
	return h
}

// DeleteAll deletes every held job. Each must still be this holder's (DELETED) unless taken,
// when NOT_FOUND is the answer expected (the jobs went to other workers meanwhile); an
// acknowledged delete of a job another worker got is then a violation the ledger reports.
func (h *Holder) DeleteAll(t testing.TB, taken bool) {
	t.Helper()
	for _, id := range h.ids {
		sent := time.Now()
		h.c.l.Ledger.DeleteSent(id)
		_ = h.c.conn.SetDeadline(sent.Add(h.c.l.OpTimeout))
		err := h.c.bc.Delete(id)
		switch {
		case err == nil:
			h.c.l.Ledger.Deleted(h.c.holder, h.c.gw.Name, id, sent, time.Now())
			if taken {
				t.Errorf("holder %s: delete %d answered DELETED, but its job was given to another worker", h.c.holder, id)
			}
		case taken && errors.Is(err, beanstalk.ErrNotFound):
		default:
			t.Errorf("holder %s: delete %d: %v", h.c.holder, id, err)
		}
	}
}

// IDs are the held jobs.
func (h *Holder) IDs() []uint64 { return h.ids }

// Name is the holder's name in the ledger.
func (h *Holder) Name() string { return h.c.holder }

// Close closes the holder's connection.
func (h *Holder) Close() { h.c.close() }
