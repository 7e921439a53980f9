package redis

import (
	"context"
	"errors"

	"github.com/beangate/beangate/backend"
)

// BeginSession registers s (using and watching default) and starts keeping its process's
// lease alive.
func (b *Backend) BeginSession(ctx context.Context, s backend.SessionID, info backend.SessionInfo) error {
	b.procsMu.Lock()
	// The script sets the lease itself. Every other call of s comes after this one (the
	// backend.Backend contract), so its process is known here from then on.
	b.procs[s.Process()] = struct{}{}
	b.procsMu.Unlock()
	if b.spread != nil {
		return b.spreadBeginSession(ctx, s, info)
	}
	_, err := b.call(ctx, opSessionBegin, string(s), s.Process(), ms(b.opts.LeaseTTL), info.Addr)
	return err
}

// EndSession returns s's reservations to ready and drops its tube references.
// A reserve of s waiting in this process gives up with errSessionEnded.
//
// If the call fails (Redis down or slow), the error is returned and the end is retried in the
// background until it succeeds or the Backend closes: otherwise s's reservations would wait for
// their TTR, since the reapers leave a live process's sessions alone. s stays registered under
// its process meanwhile, so if this process dies, the reapers return them.
func (b *Backend) EndSession(ctx context.Context, s backend.SessionID) error {
	b.waiters.endSession(s)
	b.waiters.beginHandOut()
	back, err := b.endInStore(ctx, s)
	if err == nil {
		b.waiters.handOut(back)
	}
	b.waiters.endHandOut()
	if err != nil && !errors.Is(err, errClosed) {
		b.unendedMu.Lock()
		b.unended[s] = struct{}{}
		b.unendedMu.Unlock()
		b.failures.SessionEnds.Failed("redis: ending a session failed; retrying until Redis answers", err, "session", s)
	}
	return err
}

// UseTube makes tube s's used tube.
func (b *Backend) UseTube(ctx context.Context, s backend.SessionID, tube string) error {
	if b.spread != nil {
		return b.spreadUse(ctx, s, tube)
	}
	_, err := b.call(ctx, opUse, string(s), tube)
	return err
}

// WatchTube adds tube to s's watch list.
func (b *Backend) WatchTube(ctx context.Context, s backend.SessionID, tube string) error {
	if b.spread != nil {
		return b.spreadWatch(ctx, s, tube)
	}
	_, err := b.call(ctx, opWatch, string(s), tube)
	return err
}

// IgnoreTube removes tube from s's watch list.
func (b *Backend) IgnoreTube(ctx context.Context, s backend.SessionID, tube string) error {
	if b.spread != nil {
		return b.spreadIgnore(ctx, s, tube)
	}
	_, err := b.call(ctx, opIgnore, string(s), tube)
	return err
}

// endInStore ends s in the store and returns the jobs it held, in the order to hand them out.
func (b *Backend) endInStore(ctx context.Context, s backend.SessionID) ([]handed, error) {
	if b.spread != nil {
		return b.spreadEndSession(ctx, s)
	}
	res, err := b.call(ctx, opSessionEnd, string(s), s.Process())
	if err != nil {
		return nil, err
	}
	return returnedJobs(newReply(opSessionEnd, res)), nil
}
