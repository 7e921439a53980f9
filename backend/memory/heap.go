package memory

// indexedHeap is a binary min-heap that tells each element its position (through setIndex), so
// that an element can be removed or re-sorted in O(log n) without searching for it.
type indexedHeap[T any] struct {
	items    []T
	less     func(a, b T) bool
	setIndex func(x T, i int) // i == -1: no longer in the heap
}

func newIndexedHeap[T any](less func(a, b T) bool, setIndex func(x T, i int)) indexedHeap[T] {
	return indexedHeap[T]{less: less, setIndex: setIndex}
}

func (h *indexedHeap[T]) Len() int { return len(h.items) }

// Top returns the least element; ok is false when the heap is empty.
func (h *indexedHeap[T]) Top() (x T, ok bool) {
	if len(h.items) == 0 {
		return x, false
	}
	return h.items[0], true
}

func (h *indexedHeap[T]) Push(x T) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	h.setIndex(x, i)
	h.up(i)
}

// Pop removes and returns the least element; the heap must not be empty.
func (h *indexedHeap[T]) Pop() T { return h.Remove(0) }

// Remove removes and returns the element at position i.
func (h *indexedHeap[T]) Remove(i int) T {
	x := h.items[i]
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	var zero T
	h.items[last] = zero // let the garbage collector have it
	h.items = h.items[:last]
	if i != last {
		h.Fix(i)
	}
	h.setIndex(x, -1)
	return x
}

// Fix restores the order after the element at position i changed its key.
func (h *indexedHeap[T]) Fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *indexedHeap[T]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.setIndex(h.items[i], i)
	h.setIndex(h.items[j], j)
}

func (h *indexedHeap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

// down sinks the element at i and reports whether it moved.
func (h *indexedHeap[T]) down(i int) bool {
	start, n := i, len(h.items)
	for {
		least := 2*i + 1
		if least >= n {
			break
		}
		if r := least + 1; r < n && h.less(h.items[r], h.items[least]) {
			least = r
		}
		if !h.less(h.items[least], h.items[i]) {
			break
		}
		h.swap(i, least)
		i = least
	}
	return i > start
}
