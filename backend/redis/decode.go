package redis

import (
	"fmt"
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
)

// Script replies mix integers and strings (hash fields come back as strings); these helpers
// read either. A reply that does not fit is an error of its operation o; its text tells the
// shape, never the values, which may be job bodies.

func toInt(o op, v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, opErr(string(o), fmt.Errorf("a string of %d bytes in the reply is not an integer", len(x)))
		}
		return n, nil
	case nil:
		return 0, nil
	}
	return 0, opErr(string(o), fmt.Errorf("unexpected reply of type %T", v))
}

// reply walks a script's array reply, remembering the first decoding error.
type reply struct {
	op  op
	a   []any
	err error
}

func newReply(o op, v any) *reply {
	a, ok := v.([]any)
	if !ok {
		return &reply{op: o, err: opErr(string(o), fmt.Errorf("unexpected reply of type %T", v))}
	}
	return &reply{op: o, a: a}
}

func (r *reply) int(i int) int64 {
	if r.err != nil {
		return 0
	}
	if i >= len(r.a) {
		r.err = opErr(string(r.op), fmt.Errorf("short reply (%d items)", len(r.a)))
		return 0
	}
	n, err := toInt(r.op, r.a[i])
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
		r.err = opErr(string(r.op), fmt.Errorf("short reply (%d items)", len(r.a)))
		return ""
	}
	s, ok := r.a[i].(string)
	if !ok {
		r.err = opErr(string(r.op), fmt.Errorf("item %d is %T, not a string", i, r.a[i]))
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

// state reads item i, a job's state.
func (r *reply) state(i int) backend.State {
	s := r.str(i)
	if r.err != nil {
		return 0
	}
	st, err := parseState(s)
	if err != nil {
		r.err = opErr(string(r.op), err)
	}
	return st
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
	return 0, fmt.Errorf("unknown job state (%d bytes)", len(s))
}
