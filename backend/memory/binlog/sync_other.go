//go:build !linux

package binlog

import "os"

func datasync(f *os.File) error { return f.Sync() }

func preallocate(f *os.File, size int64) error { return writeZeros(f, size) }
