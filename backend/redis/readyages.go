package redis

import (
	"context"
	"time"
)

// readyAgesPerCall bounds the tubes of one call, so that a scrape of many tubes holds Redis a
// few hundred microseconds at a time.
const readyAgesPerCall = 100

// ReadyAges reads the ready time ("r") of each tube's first ready job.
func (b *Backend) ReadyAges(ctx context.Context, tubes []string) (map[string]time.Duration, error) {
	if b.spread != nil {
		return b.spreadReadyAges(ctx, tubes)
	}
	ages := make(map[string]time.Duration, len(tubes))
	for len(tubes) > 0 {
		n := min(len(tubes), readyAgesPerCall)
		args := make([]any, n)
		for i, t := range tubes[:n] {
			args[i] = t
		}
		res, err := b.call(ctx, opReadyAges, args...)
		if err != nil {
			return nil, err
		}
		r := newReply(opReadyAges, res)
		for i, t := range tubes[:n] {
			if ms := r.int(i); ms >= 0 {
				ages[t] = time.Duration(ms) * time.Millisecond
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		tubes = tubes[n:]
	}
	return ages, nil
}
