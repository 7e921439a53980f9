package binlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrLocked: another server (beangate or beanstalkd) holds the directory's lock.
var ErrLocked = errors.New("binlog directory is locked by another server")

// LockedExitStatus is beanstalkd's exit status when it cannot lock the binlog directory.
const LockedExitStatus = 10

// lockDir takes beanstalkd's lock on dir: the file "lock", opened O_WRONLY|O_CREAT mode 0600
// and write-locked whole with fcntl(F_SETLK). The lock lasts as long as the returned file is
// open.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return f, nil
}
