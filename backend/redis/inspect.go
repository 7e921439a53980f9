package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/beangate/beangate/backend"
)

// Peek returns job id in whatever state.
func (b *Backend) Peek(ctx context.Context, id uint64) (*backend.Job, error) {
	res, err := b.callJob(ctx, id, opPeek, padID(id))
	if err != nil {
		return nil, err
	}
	return b.sawJob(newReply(opPeek, res).job(0))
}

// PeekState returns tube's next job in state (Ready, Delayed or Buried).
func (b *Backend) PeekState(ctx context.Context, tube string, state backend.State) (*backend.Job, error) {
	var name string
	switch state {
	case backend.Ready, backend.Delayed, backend.Buried:
		name = state.String()
	default:
		return nil, opErr(string(opPeekState), fmt.Errorf("cannot peek state %v", state))
	}
	if b.spread != nil {
		return b.spreadPeekState(ctx, tube, name)
	}
	res, err := b.call(ctx, opPeekState, tube, name)
	if err != nil {
		return nil, err
	}
	return b.sawJob(newReply(opPeekState, res).job(0))
}

// JobStats describes job id.
func (b *Backend) JobStats(ctx context.Context, id uint64) (*backend.JobStats, error) {
	res, err := b.callJob(ctx, id, opJobStats, padID(id))
	if err != nil {
		return nil, err
	}
	r := newReply(opJobStats, res)
	st := r.state(2)
	if r.err != nil {
		return nil, r.err
	}
	left := r.dur(7)
	if left > 0 && b.opts.Clock == nil {
		// Redis TIME is read in whole ms, so a job reserved or delayed in this same ms shows its
		// full TTR or delay. Some time has always passed since: beanstalkd's ns clock shows a
		// 1 s TTR as time-left 0 at once, and so do we.
		left -= time.Microsecond
	}
	js := &backend.JobStats{
		ID: uint64(r.int(0)), Tube: r.str(1), State: st, Priority: uint32(r.int(3)),
		Age: r.dur(4), Delay: r.dur(5), TTR: r.dur(6), TimeLeft: left,
		Reserves: uint32(r.int(8)), Timeouts: uint32(r.int(9)), Releases: uint32(r.int(10)),
		Buries: uint32(r.int(11)), Kicks: uint32(r.int(12)),
	}
	if r.err == nil {
		b.saw(js.ID)
	}
	return js, r.err
}

// TubeStats describes tube; Using and Watching count sessions on every gateway.
func (b *Backend) TubeStats(ctx context.Context, tube string) (*backend.TubeStats, error) {
	if b.spread != nil {
		return b.spreadTubeStats(ctx, tube)
	}
	res, err := b.call(ctx, opTubeStats, tube)
	if err != nil {
		return nil, err
	}
	r := newReply(opTubeStats, res)
	ts := &backend.TubeStats{
		Name: tube, UrgentJobs: uint64(r.int(0)), ReadyJobs: uint64(r.int(1)),
		ReservedJobs: uint64(r.int(2)), DelayedJobs: uint64(r.int(3)), BuriedJobs: uint64(r.int(4)),
		TotalJobs: uint64(r.int(5)), Using: uint64(r.int(6)), Watching: uint64(r.int(7)),
		CmdDelete: uint64(r.int(8)), CmdPauseTube: uint64(r.int(9)),
		Pause: r.dur(10), PauseTimeLeft: max(r.dur(11), 0),
	}
	return ts, r.err
}

// Stats returns the namespace-wide figures.
func (b *Backend) Stats(ctx context.Context) (*backend.Stats, error) {
	if b.spread != nil {
		return b.spreadStats(ctx)
	}
	res, err := b.call(ctx, opStats)
	if err != nil {
		return nil, err
	}
	r := newReply(opStats, res)
	s := &backend.Stats{
		UrgentJobs: uint64(r.int(0)), ReadyJobs: uint64(r.int(1)), ReservedJobs: uint64(r.int(2)),
		DelayedJobs: uint64(r.int(3)), BuriedJobs: uint64(r.int(4)), TotalJobs: uint64(r.int(5)),
		JobTimeouts: uint64(r.int(6)), Tubes: uint64(r.int(7)),
	}
	return s, r.err
}

// ListTubes names every tube, in beanstalkd's order.
func (b *Backend) ListTubes(ctx context.Context) ([]string, error) {
	if b.spread != nil {
		return b.spreadListTubes(ctx)
	}
	res, err := b.call(ctx, opListTubes)
	if err != nil {
		return nil, err
	}
	r := newReply(opListTubes, res)
	names := make([]string, len(r.a))
	for i := range r.a {
		names[i] = r.str(i)
	}
	return names, r.err
}

// PauseTube pauses tube for d (0 unpauses).
func (b *Backend) PauseTube(ctx context.Context, tube string, d time.Duration) error {
	if b.spread != nil {
		return b.spreadPause(ctx, tube, d)
	}
	return b.callFound(ctx, opPause, tube, ms(d))
}
