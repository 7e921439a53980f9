package binlog

import (
	"errors"
	"os"
	"syscall"
)

// datasync flushes f's data (and the metadata needed to read it back) to the device.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// preallocate reserves size bytes of disk for f, so that later writes inside them cannot run
// out of space.
func preallocate(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		return writeZeros(f, size)
	}
	return err
}
