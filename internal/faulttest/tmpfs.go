package faulttest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/beangate/beangate/backend/backendtest"
)

// Tmpfs mounts a tmpfs of size (as mount takes it: "2m") on a fresh directory, unmounted when
// the test ends: a disk that fills up for real. It needs root.
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		backendtest.Unavailable(t, "mounting a tmpfs (root needed): %v: %s", err, out)
		return ""
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
		_ = os.Remove(dir)
	})
	return dir
}
