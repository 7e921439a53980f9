package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/beangate/beangate/backend"
)

// JobHistory reads job id's history list (B:j:<id>:h, written by the scripts: history in
// lua/lib.lua), after its tube's due transitions.
func (b *Backend) JobHistory(ctx context.Context, id uint64) ([]backend.JobEvent, error) {
	res, err := b.callJob(ctx, id, opJobHistory, padID(id))
	if err != nil {
		return nil, err
	}
	items, ok := res.([]any)
	if !ok {
		return nil, opErr(string(opJobHistory), fmt.Errorf("unexpected reply of type %T", res))
	}
	out := make([]backend.JobEvent, 0, len(items))
	for i, it := range items {
		s, _ := it.(string)
		e, err := backend.ParseEvent(s, time.Millisecond)
		if err != nil {
			return nil, opErr(string(opJobHistory), fmt.Errorf("event %d: %w", i, err))
		}
		out = append(out, e)
	}
	return out, nil
}
