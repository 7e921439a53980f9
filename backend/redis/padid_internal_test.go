package redis

import (
	"fmt"
	"math"
	"testing"
)

func TestPadID(t *testing.T) {
	for _, id := range []uint64{0, 1, 42, 1 << 40, math.MaxUint64} {
		if got, want := padID(id), fmt.Sprintf("%020d", id); got != want {
			t.Errorf("padID(%d) = %q, want %q", id, got, want)
		}
	}
}
