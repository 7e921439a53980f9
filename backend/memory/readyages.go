package memory

import (
	"context"
	"time"
)

// ReadyAges reports how long each tube's first ready job has been ready.
func (b *Backend) ReadyAges(ctx context.Context, tubes []string) (map[string]time.Duration, error) {
	now, err := b.begin(ctx, "ready ages")
	if err != nil {
		return nil, err
	}
	defer b.end()
	ages := make(map[string]time.Duration, len(tubes))
	for _, name := range tubes {
		if t := b.tubes[name]; t != nil {
			if j, ok := t.ready.Top(); ok {
				ages[name] = max(now.Sub(timeAt(j.at)), 0)
			}
		}
	}
	return ages, nil
}
