package redis

import (
	"context"
	"sync"
)

// execSpreadBatch sends a batch of the spread layout: its calls grouped by slot (base), one
// FCALL per slot, the slots' FCALLs at once, so that a batch costs about one round trip however
// many masters it reaches. A batch within one slot, the usual case under load of one tube, is
// today's batch.
func (b *Backend) execSpreadBatch(ctx context.Context, calls []opCall, replies []opReply) error {
	first := calls[0].base
	same := true
	for _, c := range calls[1:] {
		if c.base != first {
			same = false
			break
		}
	}
	if same {
		return b.execOneBase(ctx, calls, replies)
	}
	groups := map[string][]int{}
	var order []string
	for i, c := range calls {
		if _, ok := groups[c.base]; !ok {
			order = append(order, c.base)
		}
		groups[c.base] = append(groups[c.base], i)
	}
	var wg sync.WaitGroup
	for _, base := range order {
		idx := groups[base]
		wg.Go(func() {
			gc := make([]opCall, len(idx))
			gr := make([]opReply, len(idx))
			for j, i := range idx {
				gc[j] = calls[i]
			}
			if err := b.execOneBase(ctx, gc, gr); err != nil {
				for j := range gr {
					gr[j] = opReply{err: err}
				}
			}
			for j, i := range idx {
				replies[i] = gr[j]
			}
		})
	}
	wg.Wait()
	return nil
}
