package memory

// jobTable finds a job by id. A Go map[uint64]*job spends ~38 bytes a job at a million jobs
// (16-byte slots, control bytes, loose fill); this table keeps only the job pointer (the key is
// the job's own id), ~14 bytes a job. It grows the way Go's maps do, so that no insert stalls:
// a directory, indexed by the hash's top bits, of small linear-probing tables, each split in
// two when full (extendible hashing), so an insert rehashes at most tableMax jobs.
type jobTable struct {
	dir   []*jobSubtable // 1<<depth entries; a subtable of local depth d fills 1<<(depth-d)
	depth uint8
	n     int
}

type jobSubtable struct {
	slots []*job // a power of two in length
	bits  uint8  // log2(len(slots))
	depth uint8  // how many top bits of the hash all its jobs share
	n     int
}

const (
	tableMin = 8    // slots of a new subtable
	tableMax = 1024 // slots of a subtable before it splits
)

func hashID(id uint64) uint64 { return id * 0x9e3779b97f4a7c15 } // Fibonacci hashing

func (t *jobTable) Len() int { return t.n }

func (t *jobTable) sub(h uint64) *jobSubtable {
	if t.dir == nil {
		t.dir = []*jobSubtable{newSubtable(tableMin, 0)}
	}
	return t.dir[h>>1>>(63-t.depth)] // two shifts: a shift by 64 would not give 0 in one
}

func newSubtable(size int, depth uint8) *jobSubtable {
	s := &jobSubtable{slots: make([]*job, size), depth: depth}
	for 1<<s.bits < size {
		s.bits++
	}
	return s
}

// home is where the probe for hash h starts: the bits after the subtable's shared ones.
func (s *jobSubtable) home(h uint64) int {
	return int(h << s.depth >> (64 - s.bits))
}

// Get returns job id, or nil.
func (t *jobTable) Get(id uint64) *job {
	h := hashID(id)
	s := t.sub(h)
	mask := len(s.slots) - 1
	for i := s.home(h); ; i = (i + 1) & mask {
		j := s.slots[i]
		if j == nil || j.id == id {
			return j
		}
	}
}

// Put stores j, replacing a job of the same id.
func (t *jobTable) Put(j *job) {
	h := hashID(j.id)
	s := t.sub(h)
	if (s.n+1)*4 > len(s.slots)*3 {
		t.grow(s, h)
		s = t.sub(h)
	}
	if s.insert(h, j) {
		t.n++
	}
}

// insert reports whether j is new to s.
func (s *jobSubtable) insert(h uint64, j *job) bool {
	mask := len(s.slots) - 1
	for i := s.home(h); ; i = (i + 1) & mask {
		switch old := s.slots[i]; {
		case old == nil:
			s.slots[i] = j
			s.n++
			return true
		case old.id == j.id:
			s.slots[i] = j
			return false
		}
	}
}

// grow doubles a small subtable, or splits a full one in two by its next hash bit.
func (t *jobTable) grow(s *jobSubtable, h uint64) {
	if len(s.slots) < tableMax {
		bigger := newSubtable(2*len(s.slots), s.depth)
		s.moveTo(func(uint64) *jobSubtable { return bigger })
		*s = *bigger
		return
	}
	if s.depth == t.depth { // the directory needs one more bit
		dir := make([]*jobSubtable, 2*len(t.dir))
		for i, x := range t.dir {
			dir[2*i], dir[2*i+1] = x, x
		}
		t.dir, t.depth = dir, t.depth+1
	}
	lo, hi := newSubtable(tableMax, s.depth+1), newSubtable(tableMax, s.depth+1)
	bit := 63 - s.depth
	s.moveTo(func(h uint64) *jobSubtable {
		if h>>bit&1 == 0 {
			return lo
		}
		return hi
	})
	// Repoint the directory entries that held s (the aligned range around h's): the first half
	// gets lo.
	span := 1 << (t.depth - s.depth)
	first := int(h>>1>>(63-t.depth)) &^ (span - 1)
	for i := range span {
		if i < span/2 {
			t.dir[first+i] = lo
		} else {
			t.dir[first+i] = hi
		}
	}
}

func (s *jobSubtable) moveTo(dst func(h uint64) *jobSubtable) {
	for _, j := range s.slots {
		if j != nil {
			h := hashID(j.id)
			dst(h).insert(h, j)
		}
	}
}

// Delete removes job id if present.
func (t *jobTable) Delete(id uint64) {
	h := hashID(id)
	s := t.sub(h)
	mask := len(s.slots) - 1
	i := s.home(h)
	for ; s.slots[i] == nil || s.slots[i].id != id; i = (i + 1) & mask {
		if s.slots[i] == nil {
			return
		}
	}
	// Backward-shift deletion: move later jobs of the run into the gap when their probe
	// started at or before it, so that no probe meets a hole before its job.
	for gap, k := i, (i+1)&mask; ; k = (k + 1) & mask {
		j := s.slots[k]
		if j == nil {
			s.slots[gap] = nil
			break
		}
		if home := s.home(hashID(j.id)); (k-home)&mask >= (k-gap)&mask {
			s.slots[gap] = j
			gap = k
		}
	}
	s.n--
	t.n--
}
