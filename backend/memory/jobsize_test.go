package memory

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A server holds millions of jobs: the record must stay within the allocator's 128-byte size
// class (the next is 144), or every stored job costs 16 bytes more.
func TestJobRecordSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(job{}), uintptr(128))
}
