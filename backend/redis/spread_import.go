package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// Imports keeping ids in the spread layout (docs/redis-cluster.md, "Imported ids"). A job goes
// to its tube's bucket, but its id, made elsewhere, names bucket id mod 1024. When that is
// another bucket, the id is first reserved there by a forwarding entry (forward.lua), which
// also raises that bucket's sequence past the id; the commands that name the id look there
// first and follow the entry: a second round trip, for imported ids only.

// spreadImport is Import in the spread layout: per chunk, the forwarding entries of the ids
// that need one (concurrently), then one import call per bucket (concurrently).
func (b *Backend) spreadImport(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, error) {
	out := make([]backend.Imported, 0, len(jobs))
	for start := 0; start < len(jobs); start += importChunk {
		got, err := b.spreadImportChunk(ctx, jobs[start:min(start+importChunk, len(jobs))])
		if err != nil {
			return out, err
		}
		out = append(out, got...)
	}
	return out, nil
}

func (b *Backend) spreadImportChunk(ctx context.Context, chunk []backend.ImportJob) ([]backend.Imported, error) {
	buckets := make([]int, len(chunk))
	for i := range chunk {
		r, _, err := b.placement(ctx, chunk[i].Tube, true)
		if err != nil {
			return nil, opErr(string(opImport), err)
		}
		buckets[i] = r.Buckets[0]
	}
	// An id that another bucket's entry cannot forward (a job of that bucket has it, or an
	// entry to a third one) is given a fresh id, as import.lua does for an id already taken.
	ids := make([]uint64, len(chunk))
	errs := make([]error, len(chunk))
	var wg sync.WaitGroup
	for i := range chunk {
		id := chunk[i].ID
		ids[i] = id
		if id == 0 || idBucket(id) == buckets[i] {
			continue
		}
		wg.Go(func() {
			res, err := b.callIn(ctx, idBucket(id), opForward, padID(id), strconv.Itoa(buckets[i]))
			if err != nil {
				errs[i] = err
				return
			}
			n, err := toInt(opForward, res)
			if err != nil {
				errs[i] = err
			} else if n == 0 {
				ids[i] = 0
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	byBucket := map[int][]int{}
	for i, bk := range buckets {
		byBucket[bk] = append(byBucket[bk], i)
	}
	out := make([]backend.Imported, len(chunk))
	for bk, idx := range byBucket {
		wg.Go(func() {
			sub, subIDs := make([]backend.ImportJob, len(idx)), make([]uint64, len(idx))
			for k, i := range idx {
				sub[k], subIDs[k] = chunk[i], ids[i]
			}
			res, err := b.callIn(ctx, bk, opImport, importArgs(b.floorArg(), strconv.Itoa(bk), sub, subIDs)...)
			if err == nil {
				r := newReply(opImport, res)
				if r.err == nil && len(r.a) != 2*len(sub) {
					err = opErr(string(opImport), fmt.Errorf("%d values for %d jobs", len(r.a), len(sub)))
				}
				for k, i := range idx {
					if err != nil || r.err != nil {
						break
					}
					out[i] = backend.Imported{ID: uint64(r.int(2 * k)), Outcome: backend.ImportOutcome(r.int(2*k + 1))}
				}
				if err == nil {
					err = r.err
				}
			}
			for _, i := range idx {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, im := range out {
		b.saw(im.ID)
	}
	return out, nil
}

// spreadCallJob is callJob in the spread layout: in the bucket id names and, when the job is
// not there, in the bucket its forwarding entry names, if it has one (an imported id).
func (b *Backend) spreadCallJob(ctx context.Context, id uint64, o op, args ...any) (any, int, error) {
	bk := jobBucket(id)
	res, err := b.callIn(ctx, bk, o, args...)
	if !jobMissing(res, err) {
		return res, bk, err
	}
	to, ok, ferr := b.forwarded(ctx, id)
	if ferr != nil {
		return nil, bk, ferr
	}
	if !ok {
		return res, bk, err
	}
	res, err = b.callIn(ctx, to, o, args...)
	return res, to, err
}

// jobMissing tells a reply that found no job id: not found (a script's false), or a count of 0.
// (The scripts called by id also answer 0 for a job another session holds; the entry's lookup
// then finds no entry for an id made here, or the same answer in the job's bucket.)
func jobMissing(res any, err error) bool {
	if err != nil {
		return errors.Is(err, backend.ErrNotFound)
	}
	n, ok := res.(int64)
	return ok && n == 0
}

// forwarded is the bucket that keeps imported job id, from the forwarding entry in the bucket
// id names (ok false: none, a job made in this namespace or none at all).
func (b *Backend) forwarded(ctx context.Context, id uint64) (int, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
	defer cancel()
	s, err := b.client.Get(ctx, b.spread.base(jobBucket(id))+":x:"+padID(id)).Result()
	if errors.Is(err, goredis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, opErr("reading a forwarding entry", err)
	}
	to, err := strconv.Atoi(s)
	if err != nil || to < 0 || to >= spreadBuckets {
		return 0, false, opErr("reading a forwarding entry", fmt.Errorf("job %d: bucket %q", id, s))
	}
	return to, true, nil
}
