package redis

import (
	"fmt"
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
)

// Script replies mix integers and strings (hash fields come back as strings); these helpers
// read either.

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("backend/redis: unexpected reply %T %v", v, v)
}

// reply walks a script's array reply, remembering the first decoding error.
type reply struct {
	a   []any
	err error
}

func newReply(v any) *reply {
	a, ok := v.([]any)
	if !ok {
		return &reply{err: fmt.Errorf("backend/redis: unexpected reply %T", v)}
	}
	return &reply{a: a}
}

func (r *reply) int(i int) int64 {
	if r.err != nil {
		return 0
	}
	if i >= len(r.a) {
		r.err = fmt.Errorf("backend/redis: short reply (%d items)", len(r.a))
		return 0
	}
	n, err := toInt(r.a[i])
	if err != nil {
		r.err = err
	}
	return n
}

func (r *reply) str(i int) string {
	if r.err != nil {
		return ""
	}
	if i >= len(r.a) {
		r.err = fmt.Errorf("backend/redis: short reply (%d items)", len(r.a))
		return ""
	}
	s, ok := r.a[i].(string)
	if !ok {
		r.err = fmt.Errorf("backend/redis: item %d is %T, not a string", i, r.a[i])
	}
	return s
}

func (r *reply) dur(i int) time.Duration { return time.Duration(r.int(i)) * time.Millisecond }

// job decodes {id, tube, priority, body} starting at item i.
func (r *reply) job(i int) (*backend.Job, error) {
	j := &backend.Job{
		ID:       uint64(r.int(i)),
		Tube:     r.str(i + 1),
		Priority: uint32(r.int(i + 2)),
		Body:     []byte(r.str(i + 3)),
	}
	if r.err != nil {
		return nil, r.err
	}
	return j, nil
}

// readyFor sets j's ReadyFor from item i, the milliseconds the job had been ready when reserved
// (negative: not known, as for a job made ready by an older gateway version).
func (r *reply) readyFor(j *backend.Job, i int) *backend.Job {
	if j == nil || i >= len(r.a) {
		return j
	}
	if ms := r.int(i); ms >= 0 {
		j.ReadyFor, j.HasReadyFor = time.Duration(ms)*time.Millisecond, true
	}
	return j
}

func parseState(s string) (backend.State, error) {
	switch s {
	case "ready":
		return backend.Ready, nil
	case "delayed":
		return backend.Delayed, nil
	case "reserved":
		return backend.Reserved, nil
	case "buried":
		return backend.Buried, nil
	}
	return 0, fmt.Errorf("backend/redis: unknown job state %q", s)
}
