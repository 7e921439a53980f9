package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/beangate/beangate/backend"
)

// JobHistory reads job id's history list (B:j:<id>:h, written by the scripts: history in
// lua/lib.lua), after its tube's due transitions.
func (b *Backend) JobHistory(ctx context.Context, id uint64) ([]backend.JobEvent, error) {
	res, err := b.call(ctx, opJobHistory, padID(id))
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
		e, err := decodeEvent(s)
		if err != nil {
			return nil, opErr(string(opJobHistory), fmt.Errorf("event %d: %w", i, err))
		}
		out = append(out, e)
	}
	return out, nil
}

// decodeEvent reads one event as the scripts write it: "ms kind session address delay-ms
// policy", the last four possibly empty.
func decodeEvent(s string) (backend.JobEvent, error) {
	f := strings.Split(s, " ")
	if len(f) != 6 {
		return backend.JobEvent{}, fmt.Errorf("%d fields", len(f))
	}
	at, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return backend.JobEvent{}, fmt.Errorf("time: %w", err)
	}
	delay, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil {
		return backend.JobEvent{}, fmt.Errorf("delay: %w", err)
	}
	return backend.JobEvent{At: time.UnixMilli(at), Kind: backend.EventKind(f[1]),
		Session: backend.SessionID(f[2]), Addr: f[3], Delay: time.Duration(delay) * time.Millisecond,
		Policy: f[5]}, nil
}
