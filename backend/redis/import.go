package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/beangate/beangate/backend"
)

// importChunk is how many jobs one import call carries: big enough that the call's own cost
// vanishes, small enough that Redis serves other clients between calls.
const importChunk = 500

// Import stores jobs with their identity, each with its key record (lua/import.lua), in calls
// of importChunk jobs, each atomic.
func (b *Backend) Import(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, error) {
	if b.spread != nil {
		return b.spreadImport(ctx, jobs) // spread_import.go
	}
	out := make([]backend.Imported, 0, len(jobs))
	for start := 0; start < len(jobs); start += importChunk {
		chunk := jobs[start:min(start+importChunk, len(jobs))]
		res, err := b.call(ctx, opImport, importArgs(b.floorArg(), "", chunk, nil)...)
		if err != nil {
			return out, err
		}
		r := newReply(opImport, res)
		if r.err == nil && len(r.a) != 2*len(chunk) {
			return out, opErr(string(opImport), fmt.Errorf("%d values for %d jobs", len(r.a), len(chunk)))
		}
		for i := range chunk {
			id, outcome := uint64(r.int(2*i)), backend.ImportOutcome(r.int(2*i+1))
			if r.err != nil {
				return out, r.err
			}
			b.saw(id)
			out = append(out, backend.Imported{ID: id, Outcome: outcome})
		}
	}
	return out, nil
}

// importArgs are import.lua's arguments for jobs: the floor, the bucket ("" in the one-slot
// layout), and each job's fields, its id replaced by ids[i] where ids is given.
func importArgs(floor, bucket string, jobs []backend.ImportJob, ids []uint64) []any {
	args := make([]any, 0, 2+15*len(jobs))
	args = append(args, floor, bucket)
	for i := range jobs {
		j := &jobs[i]
		body := j.Body
		if body == nil {
			body = []byte{}
		}
		id := j.ID
		if ids != nil {
			id = ids[i]
		}
		args = append(args, j.Key, strconv.FormatUint(id, 10), j.Tube, importState(j.State),
			prio(j.Priority), ms(j.TTR), ms(j.Delay), ms(j.TimeLeft), ms(j.Age),
			u32(j.Reserves), u32(j.Timeouts), u32(j.Releases), u32(j.Buries), u32(j.Kicks), body)
	}
	return args
}

func importState(s backend.State) string {
	switch s {
	case backend.Delayed:
		return "delayed"
	case backend.Buried:
		return "buried"
	}
	return "ready"
}

func u32(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
