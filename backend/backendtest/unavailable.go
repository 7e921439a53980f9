package backendtest

import (
	"fmt"
	"os"
	"testing"
)

// Unavailable reports that what a test needs (a store, a server binary, a browser) is missing:
// with CI=true the test fails, since CI must never pass by skipping; elsewhere it is skipped,
// so that a developer without the service can still run the rest.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true, so this fails)", msg)
		return
	}
	t.Skipf("%s, skipping (CI=true makes this fail)", msg)
}
