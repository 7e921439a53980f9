package memory

import "github.com/google/btree"

// orderedJobs is a tube's ready or delayed jobs in their order, kept in a B-tree rather than a
// heap so that a console can list them from any point (ListJobs) in O(log n + page), which a
// heap cannot do without visiting everything before that point. Reserve's cost stays
// O(log n): the least job is the tree's leftmost. A job's key (priority or due time, and id)
// must not change while it is in the tree.
type orderedJobs struct {
	tree *btree.BTreeG[*job]
	less func(a, b *job) bool
}

// orderedDegree suits pointer items: nodes of a few cache lines, a shallow tree.
const orderedDegree = 32

func newOrderedJobs(less func(a, b *job) bool) orderedJobs {
	return orderedJobs{tree: btree.NewG(orderedDegree, less), less: less}
}

func (o *orderedJobs) Len() int { return o.tree.Len() }

func (o *orderedJobs) Push(j *job) { o.tree.ReplaceOrInsert(j) }

// Remove takes j out; j must be in the tree with the key it was inserted with.
func (o *orderedJobs) Remove(j *job) { o.tree.Delete(j) }

// Top returns the least job; ok is false when there is none.
func (o *orderedJobs) Top() (*job, bool) { return o.tree.Min() }

// Pop removes and returns the least job; there must be one.
func (o *orderedJobs) Pop() *job {
	j, _ := o.tree.DeleteMin()
	return j
}

// after calls fn on the jobs ordered after pivot (all of them when pivot is nil), in order,
// while fn returns true. pivot need not be in the tree: only its key is compared.
func (o *orderedJobs) after(pivot *job, fn func(*job) bool) {
	if pivot == nil {
		o.tree.Ascend(fn)
		return
	}
	o.tree.AscendGreaterOrEqual(pivot, func(j *job) bool {
		if !o.less(pivot, j) {
			return true // the pivot's own key: skip it
		}
		return fn(j)
	})
}
