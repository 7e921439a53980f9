package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// shardedWakeups are a gateway's sharded subscriptions in a Redis Cluster (the spread layout,
// docs/redis-cluster.md): one SSUBSCRIBE connection per master, carrying the channels of that
// master's slots that this process's waiting reserves need. Classic SUBSCRIBE/PUBLISH is never
// used: a cluster broadcasts every PUBLISH to every node.
//
// How a waiting reserve uses it (the order matters):
//
//  1. register itself as a waiter of its tubes here (waiters.add), so that a wake-up or onLost
//     from now on reaches it;
//  2. Subscribe to the ready channels of every bucket it watches ({prefix:b}:ready), which
//     returns once each master confirmed its channels: a publish after that is delivered;
//  3. only then run the reserve that counts the session as waiting in those buckets (the
//     reserve script's wt), which is what makes puts there publish;
//  4. wait for a wake-up, a due time or its timeout; when it leaves, Unsubscribe what it
//     subscribed (each channel is counted: the last waiter's Unsubscribe drops it).
//
// A publish can only be sent once the reserve counted itself waiting (3), after the
// subscription is live (2), so none is lost while the connection holds. When it does not (the
// slot moved away: the server ends its channels with sunsubscribe; the master failed or was
// killed: the connection breaks), each channel concerned is subscribed again through its
// slot's master now, and onLost(channel) is called once per channel, after the new
// subscription is confirmed: a publish of the meantime may have been missed, so the caller
// wakes that channel's waiters to try again, and a publish after their try is delivered.
//
// The Backend makes one with newShardedWakeups(its ClusterClient, CommandTimeout, onMessage
// waking one waiter of the tube named by the payload, as listen does today, onLost waking the
// waiters of the tubes placed in that channel's bucket), and Closes it in Close. A Subscribe that
// fails (no master of those slots reachable within the reserve's context) leaves the reserve to
// its due times and the safety poll, as a lost publish does today.
//
// One SSUBSCRIBE per channel: Redis refuses one command for channels of several slots
// (CROSSSLOT), and go-redis's PubSub would make that command when it reconnects by itself, so
// each connection is closed at its first failure and never reconnected; its channels are
// subscribed again, each on its own, where their slots are now.
type shardedWakeups struct {
	cc        *goredis.ClusterClient
	timeout   time.Duration             // bounds each attempt to subscribe
	onMessage func(channel, msg string) // a publish (SPUBLISH) on a subscribed channel
	onLost    func(channel string)      // publishes on channel may have been missed

	mu     sync.Mutex
	chans  map[string]*shardChan // wanted channels
	conns  map[string]*shardConn // by master address
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

// shardChan is a wanted channel.
type shardChan struct {
	name  string
	refs  int           // Subscribes not yet matched by an Unsubscribe
	conn  *shardConn    // where it is subscribed, or its SSUBSCRIBE sent; nil while one is looked for
	ready chan struct{} // closed once the server confirmed the subscription on conn
	lost  bool          // subscribed before, lost since: onLost when confirmed again
	err   error         // why the last attempt to subscribe failed
	tries int           // attempts to subscribe since the last confirmation
	// avoid is the node it was lost from: the client's slot map may still name it (a failed
	// over master, now a replica, serves SSUBSCRIBE of its master's slots, which hides the
	// failover), so it is not subscribed there again before the map is reloaded a few times.
	avoid string
}

// shardConn is one master's subscription connection.
type shardConn struct {
	addr string
	ps   *goredis.PubSub
	wmu  sync.Mutex // held from queueing a command in sent to writing it, so both orders agree
	// Guarded by shardedWakeups.mu:
	chans map[string]*shardChan // subscribed here, or SSUBSCRIBE sent
	sent  []shardCmd            // sent, reply not yet read, in order
	dead  bool
}

// shardCmd is an SSUBSCRIBE (ch set) or SUNSUBSCRIBE sent on a connection.
type shardCmd struct {
	subscribe bool
	channel   string
	ch        *shardChan
}

const (
	// shardPingEvery: a connection silent this long is sent a PING; silent as long again, it
	// is taken as broken (a master gone without closing the connection).
	shardPingEvery = 10 * time.Second
	// shardRetryFirst and shardRetryMax bound the wait between attempts to subscribe a channel
	// whose master is not known or not reachable (a failover under way).
	shardRetryFirst = 10 * time.Millisecond
	shardRetryMax   = time.Second
	// shardAvoidTries is how many attempts skip the node a channel was lost from (avoid).
	shardAvoidTries = 8
)

func newShardedWakeups(cc *goredis.ClusterClient, timeout time.Duration, onMessage func(channel, msg string), onLost func(channel string)) *shardedWakeups {
	return &shardedWakeups{
		cc: cc, timeout: timeout, onMessage: onMessage, onLost: onLost,
		chans: map[string]*shardChan{}, conns: map[string]*shardConn{}, stop: make(chan struct{}),
	}
}

// Subscribe counts one more use of each of channels and returns once each is subscribed on its
// slot's master (confirmed by the server), or with ctx's error (the uses counted undone).
func (s *shardedWakeups) Subscribe(ctx context.Context, channels ...string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	for _, name := range channels {
		sc := s.chans[name]
		if sc == nil {
			sc = &shardChan{name: name, ready: make(chan struct{})}
			s.chans[name] = sc
			s.wg.Add(1)
			go s.attach(sc, "")
		}
		sc.refs++
	}
	s.mu.Unlock()
	for _, name := range channels {
		for {
			s.mu.Lock()
			sc := s.chans[name]
			ready := sc.ready
			s.mu.Unlock()
			select {
			case <-ready:
			case <-ctx.Done():
				s.Unsubscribe(channels...)
				s.mu.Lock()
				err := sc.err
				s.mu.Unlock()
				if err != nil {
					return fmt.Errorf("subscribing to %s: %w (last attempt: %w)", name, ctx.Err(), err)
				}
				return fmt.Errorf("subscribing to %s: %w", name, ctx.Err())
			case <-s.stop:
				return errClosed
			}
			// Lost again since confirmed: wait for its new subscription.
			s.mu.Lock()
			again := s.chans[name].ready != ready
			s.mu.Unlock()
			if !again {
				break
			}
		}
	}
	return nil
}

// Unsubscribe counts one use less of each of channels; a channel no longer used is dropped
// (SUNSUBSCRIBE).
func (s *shardedWakeups) Unsubscribe(channels ...string) {
	type dropped struct {
		sc *shardChan
		c  *shardConn
	}
	var drop []dropped
	s.mu.Lock()
	for _, name := range channels {
		sc := s.chans[name]
		if sc == nil {
			continue
		}
		if sc.refs--; sc.refs == 0 {
			delete(s.chans, name)
			if sc.conn != nil {
				drop = append(drop, dropped{sc, sc.conn})
			}
		}
	}
	s.mu.Unlock()
	for _, d := range drop {
		sc, c := d.sc, d.c
		c.wmu.Lock()
		s.mu.Lock()
		// Wanted again meanwhile, or its connection gone: nothing to drop.
		if s.chans[sc.name] != nil || c.dead || c.chans[sc.name] != sc {
			s.mu.Unlock()
			c.wmu.Unlock()
			continue
		}
		delete(c.chans, sc.name)
		c.sent = append(c.sent, shardCmd{channel: sc.name})
		s.mu.Unlock()
		err := c.ps.SUnsubscribe(context.Background(), sc.name)
		c.wmu.Unlock()
		if err != nil {
			s.connLost(c)
		}
	}
}

// Close ends every subscription; Subscribe fails from then on.
func (s *shardedWakeups) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	var conns []*shardConn
	for _, c := range s.conns {
		c.dead = true
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ps.Close()
	}
	s.wg.Wait()
}

// attach subscribes sc on its slot's master (hint: the address a MOVED reply named), trying
// again until it succeeds or sc is no longer wanted. Attempts since sc was last confirmed are
// spaced, doubling up to shardRetryMax: a master that is down is not dialled in a tight loop.
func (s *shardedWakeups) attach(sc *shardChan, hint string) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		tries := sc.tries
		sc.tries++
		s.mu.Unlock()
		if tries > 0 {
			t := time.NewTimer(min(shardRetryFirst<<min(tries-1, 10), shardRetryMax))
			select {
			case <-s.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		err := s.trySubscribe(sc, hint)
		if err == nil {
			return
		}
		hint = ""
		s.mu.Lock()
		sc.err = err
		s.mu.Unlock()
		s.cc.ReloadState(context.Background())
	}
}

// trySubscribe sends SSUBSCRIBE for sc to its slot's master; its confirmation arrives on the
// connection's reader (receive). nil also when sc is no longer wanted.
func (s *shardedWakeups) trySubscribe(sc *shardChan, hint string) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if !s.wanted(sc) {
		return nil
	}
	var node *goredis.Client
	if hint != "" {
		node, _ = clusterNode(ctx, s.cc, hint)
	}
	if node == nil {
		var err error
		if node, err = s.cc.MasterForKey(ctx, sc.name); err != nil {
			return err
		}
	}
	addr := node.Options().Addr
	s.mu.Lock()
	avoid := addr == sc.avoid && sc.tries < shardAvoidTries
	s.mu.Unlock()
	if avoid {
		return fmt.Errorf("the slot map still names %s, where %s was lost", addr, sc.name)
	}
	c, err := s.connTo(node)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	s.mu.Lock()
	if s.closed || s.chans[sc.name] != sc {
		s.mu.Unlock()
		return nil
	}
	if c.dead {
		s.mu.Unlock()
		return fmt.Errorf("subscription connection to %s closed", c.addr)
	}
	sc.conn = c
	c.chans[sc.name] = sc
	c.sent = append(c.sent, shardCmd{subscribe: true, channel: sc.name, ch: sc})
	s.mu.Unlock()
	if err := c.ps.SSubscribe(ctx, sc.name); err != nil {
		s.mu.Lock()
		if sc.conn == c {
			sc.conn = nil // this attach tries again, not connLost
			delete(c.chans, sc.name)
		}
		s.mu.Unlock()
		s.connLost(c)
		return err
	}
	return nil
}

func (s *shardedWakeups) wanted(sc *shardChan) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed && s.chans[sc.name] == sc
}

// connTo is the live subscription connection to node, opened (with its reader) if none is.
func (s *shardedWakeups) connTo(node *goredis.Client) (*shardConn, error) {
	addr := node.Options().Addr
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if c := s.conns[addr]; c != nil && !c.dead {
		return c, nil
	}
	c := &shardConn{addr: addr, ps: node.SSubscribe(context.Background()), chans: map[string]*shardChan{}}
	s.conns[addr] = c
	s.wg.Add(1)
	go s.receive(c)
	return c, nil
}

// receive reads c's replies and messages until it fails or is closed.
func (s *shardedWakeups) receive(c *shardConn) {
	defer s.wg.Done()
	pinged := false
	for {
		msg, err := c.ps.ReceiveTimeout(context.Background(), shardPingEvery)
		switch {
		case err == nil:
			pinged = false
		case isReply(err):
			s.refused(c, err)
			continue
		case isTimeout(err) && !pinged:
			pinged = true
			if c.ps.Ping(context.Background()) == nil {
				continue
			}
			fallthrough
		default:
			s.connLost(c)
			return
		}
		switch m := msg.(type) {
		case *goredis.Message:
			if s.live(c) {
				s.onMessage(m.Channel, m.Payload)
			}
		case *goredis.Subscription:
			switch m.Kind {
			case "ssubscribe":
				s.confirmed(c, m.Channel)
			case "sunsubscribe":
				s.unsubscribed(c, m.Channel)
			}
		}
	}
}

func (s *shardedWakeups) live(c *shardConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !c.dead
}

// popSentLocked takes the first command sent on c of that kind for channel, if any.
func (c *shardConn) popSentLocked(subscribe bool, channel string) (shardCmd, bool) {
	for i, cmd := range c.sent {
		if cmd.subscribe == subscribe && cmd.channel == channel {
			c.sent = append(c.sent[:i], c.sent[i+1:]...)
			return cmd, true
		}
	}
	return shardCmd{}, false
}

// confirmed: the server confirmed an SSUBSCRIBE of channel on c.
func (s *shardedWakeups) confirmed(c *shardConn, channel string) {
	s.mu.Lock()
	cmd, ok := c.popSentLocked(true, channel)
	sc := cmd.ch
	if !ok || c.dead || s.chans[channel] != sc || sc.conn != c {
		s.mu.Unlock()
		return // dropped or moved meanwhile
	}
	lost := sc.lost
	sc.lost, sc.err, sc.tries, sc.avoid = false, nil, 0, ""
	close(sc.ready)
	s.mu.Unlock()
	if lost {
		s.onLost(channel)
	}
}

// unsubscribed: channel is no longer subscribed on c, as asked (Unsubscribe) or because its
// slot left c's node (a resharding, a failover that made it a replica).
func (s *shardedWakeups) unsubscribed(c *shardConn, channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, asked := c.popSentLocked(false, channel); asked || c.dead {
		s.closeIfIdleLocked(c)
		return
	}
	sc := c.chans[channel]
	delete(c.chans, channel)
	if sc != nil && sc.conn == c {
		s.relocateLocked(sc, "")
	}
	s.closeIfIdleLocked(c)
}

// refused: the server answered the oldest command sent on c with an error, a MOVED if its
// channel's slot is served elsewhere now.
func (s *shardedWakeups) refused(c *shardConn, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(c.sent) == 0 || c.dead {
		return
	}
	cmd := c.sent[0]
	c.sent = c.sent[1:]
	if !cmd.subscribe {
		return
	}
	delete(c.chans, cmd.channel)
	if sc := cmd.ch; s.chans[cmd.channel] == sc && sc.conn == c {
		sc.err = err
		hint := ""
		if isRedirect(err, "MOVED") {
			hint = redirectAddr(err)
		}
		s.relocateLocked(sc, hint)
	}
	s.closeIfIdleLocked(c)
}

// connLost closes c, broken, and subscribes its channels again where their slots are now.
func (s *shardedWakeups) connLost(c *shardConn) {
	s.mu.Lock()
	if c.dead {
		s.mu.Unlock()
		return
	}
	c.dead = true
	if s.conns[c.addr] == c {
		delete(s.conns, c.addr)
	}
	for _, sc := range c.chans {
		if sc.conn == c && s.chans[sc.name] == sc {
			s.relocateLocked(sc, "")
		}
	}
	c.chans, c.sent = nil, nil
	s.mu.Unlock()
	_ = c.ps.Close()
	s.cc.ReloadState(context.Background())
}

// relocateLocked starts subscribing sc again; a subscription that was confirmed is lost, so
// Subscribe waits for the new one and onLost follows it.
func (s *shardedWakeups) relocateLocked(sc *shardChan, hint string) {
	if sc.conn != nil && hint == "" {
		sc.avoid = sc.conn.addr
	}
	sc.conn = nil
	select {
	case <-sc.ready:
		sc.ready, sc.lost = make(chan struct{}), true
	default:
	}
	if s.closed {
		return
	}
	s.wg.Add(1)
	go s.attach(sc, hint)
}

// closeIfIdleLocked closes c once it carries no channel and awaits no reply: a master that
// served the slots of none of the wanted channels (any more) keeps no connection.
func (s *shardedWakeups) closeIfIdleLocked(c *shardConn) {
	if c.dead || len(c.chans) > 0 || len(c.sent) > 0 {
		return
	}
	c.dead = true
	if s.conns[c.addr] == c {
		delete(s.conns, c.addr)
	}
	go func() { _ = c.ps.Close() }()
}

// isTimeout tells a read deadline that passed.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
