package redis

import (
	"context"
	"errors"

	"github.com/beangate/beangate/backend"
)

// Sessions of the spread layout: a session's state lives in the buckets of the tubes it uses,
// watches and reserves from (today's session keys under each bucket's base). The Backend
// remembers per session those buckets (enter), so that EndSession ends it in each of them, and
// its process's lease and the list of those buckets live in the home slot for the reaper.

func (b *Backend) spreadBeginSession(ctx context.Context, s backend.SessionID, info backend.SessionInfo) error {
	sp := b.spread
	pipe := b.client.Pipeline()
	pipe.Set(ctx, sp.home+":lease:"+s.Process(), 1, b.opts.LeaseTTL)
	pipe.SAdd(ctx, sp.home+":procs", s.Process())
	if _, err := pipe.Exec(ctx); err != nil {
		return opErr(string(opSessionBegin), err)
	}
	bk, err := b.firstBucket(ctx, backend.DefaultTube)
	if err != nil {
		return err
	}
	sp.mu.Lock()
	sp.session(s).buckets[bk] = true // session_begin below records its address there
	sp.session(s).addr = info.Addr
	sp.mu.Unlock()
	if err := b.enter(ctx, s, bk); err != nil {
		return err
	}
	sp.mu.Lock()
	sp.session(s).use = backend.DefaultTube
	sp.mu.Unlock()
	_, err = b.callIn(ctx, bk, opSessionBegin, string(s), s.Process(), ms(b.opts.LeaseTTL), info.Addr)
	return err
}

// spreadUse makes tube s's used tube in its first shard's bucket, then drops the previous
// used tube in its own bucket, if another.
func (b *Backend) spreadUse(ctx context.Context, s backend.SessionID, tube string) error {
	bk, err := b.firstBucket(ctx, tube)
	if err != nil {
		return err
	}
	if err := b.enter(ctx, s, bk); err != nil {
		return err
	}
	if _, err := b.callIn(ctx, bk, opUse, string(s), tube); err != nil {
		return err
	}
	sp := b.spread
	sp.mu.Lock()
	ss := sp.session(s)
	old := ss.use
	ss.use = tube
	sp.mu.Unlock()
	if old == "" || old == tube {
		return nil
	}
	if r, ok := sp.known(old); ok && r.Buckets[0] != bk {
		_, err = b.callIn(ctx, r.Buckets[0], opUnuse, string(s))
	}
	return err
}

func (b *Backend) spreadWatch(ctx context.Context, s backend.SessionID, tube string) error {
	bk, err := b.firstBucket(ctx, tube)
	if err != nil {
		return err
	}
	if err := b.enter(ctx, s, bk); err != nil {
		return err
	}
	_, err = b.callIn(ctx, bk, opWatch, string(s), tube)
	return err
}

func (b *Backend) spreadIgnore(ctx context.Context, s backend.SessionID, tube string) error {
	r, ok, err := b.placement(ctx, tube, false)
	if err != nil || !ok {
		return err
	}
	_, err = b.callIn(ctx, r.Buckets[0], opIgnore, string(s), tube)
	return err
}

// spreadEndSession ends s in every bucket where it has state, at once, and forgets it once
// every bucket has answered.
func (b *Backend) spreadEndSession(ctx context.Context, s backend.SessionID) ([]handed, error) {
	sp := b.spread
	sp.mu.Lock()
	var buckets []int
	if ss := sp.sessions[s]; ss != nil {
		for bk := range ss.buckets {
			buckets = append(buckets, bk)
		}
	}
	sp.mu.Unlock()
	var back []handed
	var errs []error
	for _, rep := range b.fanOut(ctx, buckets, opSessionEnd, func(int) []any { return []any{string(s), s.Process()} }) {
		if rep.err != nil {
			errs = append(errs, rep.err)
			continue
		}
		back = append(back, returnedJobs(newReply(opSessionEnd, rep.res))...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sp.mu.Lock()
	delete(sp.sessions, s)
	sp.mu.Unlock()
	return back, nil
}
