package redis

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClaimPlanPicksTheBestHeadAndBoundsItByTheNext(t *testing.T) {
	h := func(bucket int, pri uint32, id uint64) readyHead { return readyHead{Bucket: bucket, Pri: pri, ID: id} }
	tests := []struct {
		name        string
		heads       []readyHead
		wantOK      bool
		wantBest    readyHead
		wantBounded bool
		wantBound   readyHead
	}{
		{"no bucket has a job", nil, false, readyHead{}, false, readyHead{}},
		{"one bucket: no bound", []readyHead{h(3, 10, 99)}, true, h(3, 10, 99), false, readyHead{}},
		{"priority first", []readyHead{h(1, 5, 10), h(2, 1, 900), h(3, 7, 1)}, true, h(2, 1, 900), true, h(1, 5, 10)},
		{"then id", []readyHead{h(1, 5, 2048), h(2, 5, 1025), h(3, 5, 4000)}, true, h(2, 5, 1025), true, h(1, 5, 2048)},
		{"the bound is the second best, wherever it comes", []readyHead{h(4, 0, 7), h(1, 9, 1), h(2, 3, 5), h(3, 1, 8)}, true, h(4, 0, 7), true, h(3, 1, 8)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			best, bound, bounded, ok := newClaimPlan(tt.heads).next()
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.wantBest, best)
			require.Equal(t, tt.wantBounded, bounded)
			require.Equal(t, tt.wantBound, bound)
		})
	}
}

func TestClaimPlanMovesOnAfterALostClaim(t *testing.T) {
	p := newClaimPlan([]readyHead{{1, 1, 10}, {2, 2, 20}, {3, 3, 30}})
	best, bound, _, _ := p.next()
	require.Equal(t, readyHead{1, 1, 10}, best)
	require.Equal(t, readyHead{2, 2, 20}, bound)

	require.False(t, p.lostClaim(1, readyHead{1, 5, 50}, true), "bucket 1's best is now worse")
	best, bound, _, _ = p.next()
	require.Equal(t, readyHead{2, 2, 20}, best)
	require.Equal(t, readyHead{3, 3, 30}, bound)

	require.False(t, p.lostClaim(2, readyHead{}, false), "bucket 2 has none left")
	best, bound, _, _ = p.next()
	require.Equal(t, readyHead{3, 3, 30}, best)
	require.Equal(t, readyHead{1, 5, 50}, bound)

	require.True(t, p.lostClaim(3, readyHead{}, false), "the third lost claim reads every bucket again")
}

// simBuckets are buckets of ready jobs, each sorted in beanstalk's order, for the simulation.
type simBuckets map[int][]readyHead

func (s simBuckets) add(h readyHead) {
	s[h.Bucket] = append(s[h.Bucket], h)
	slices.SortFunc(s[h.Bucket], func(a, b readyHead) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
}

func (s simBuckets) heads() []readyHead {
	var out []readyHead
	for _, jobs := range s {
		if len(jobs) > 0 {
			out = append(out, jobs[0])
		}
	}
	return out
}

// claim is what reserve_claim does in one bucket, atomically: take its best job if it is no
// worse than the bound, else report that best (or none).
func (s simBuckets) claim(bucket int, bound readyHead, bounded bool) (got readyHead, taken, has bool) {
	jobs := s[bucket]
	if len(jobs) == 0 {
		return readyHead{}, false, false
	}
	if bounded && bound.before(jobs[0]) {
		return jobs[0], false, true
	}
	s[bucket] = jobs[1:]
	return jobs[0], true, true
}

// Other workers take jobs and producers add them between every step of a reserve; whatever
// they do, the job the reserve gets is no worse than any job that was ready when it began and
// still was when it claimed (the order a single-slot reserve keeps).
func TestClaimPlanNeverSkipsAJobReadyThroughout(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var nextID uint64 = 1
	newJob := func(buckets int) readyHead {
		nextID++
		return readyHead{Bucket: rng.IntN(buckets), Pri: uint32(rng.IntN(4)), ID: nextID}
	}
	reserves, startOvers := 0, 0
	for range 2000 {
		buckets := 2 + rng.IntN(5)
		s := simBuckets{}
		for range rng.IntN(12) {
			s.add(newJob(buckets))
		}
		atStart := map[readyHead]bool{}
		for _, jobs := range s {
			for _, j := range jobs {
				atStart[j] = true
			}
		}
		meddle := func() { // other workers and producers, between any two steps
			for range rng.IntN(3) {
				if rng.IntN(2) == 0 {
					s.add(newJob(buckets))
				} else if b := rng.IntN(buckets); len(s[b]) > 0 {
					delete(atStart, s[b][0]) // taken by another worker
					s[b] = s[b][1:]
				}
			}
		}
		meddle()
		p := newClaimPlan(s.heads())
		for {
			meddle()
			best, bound, bounded, ok := p.next()
			if !ok {
				break // nothing ready: this reserve would wait
			}
			got, taken, has := s.claim(best.Bucket, bound, bounded)
			if taken {
				for j := range atStart {
					require.False(t, j.before(got) && j != got, "reserved %+v though %+v was ready throughout", got, j)
				}
				reserves++
				break
			}
			if p.lostClaim(best.Bucket, got, has) {
				startOvers++
				meddle()
				p = newClaimPlan(s.heads())
			}
		}
	}
	require.Greater(t, reserves, 1000, "the simulation reserved jobs")
	require.Positive(t, startOvers, "and lost claims to other workers")
}
