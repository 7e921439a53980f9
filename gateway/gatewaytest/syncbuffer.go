package gatewaytest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a server's (or a backend's) goroutines and the test may
// share: a log destination whose output the test reads while the writers may still be running.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
