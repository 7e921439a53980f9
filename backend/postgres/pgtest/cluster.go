// Package pgtest starts private PostgreSQL servers for tests that stop and restart them.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/beangate/beangate/backend/backendtest"

	"github.com/stretchr/testify/require"
)

// Cluster is a private PostgreSQL server started by a test, so that it can be stopped and
// started again without disturbing the shared server other tests use.
type Cluster struct {
	t     testing.TB
	tools *Tools
	data  string
	sock  string
	log   string
	port  int
}

// PrivateCluster initdb's a cluster in a temporary directory and starts it on a free port with
// the server's default durability settings (fsync, synchronous_commit), as the postgres user
// when we are root (see Tools). Without the binaries the test fails when CI=true and is skipped
// elsewhere.
func PrivateCluster(t testing.TB) *Cluster {
	t.Helper()
	unavailable := func(format string, args ...any) *Cluster {
		t.Helper()
		backendtest.Unavailable(t, "private PostgreSQL cluster: "+format, args...)
		return nil
	}
	base := t.TempDir()
	if os.Geteuid() == 0 {
		// The server, run as the postgres user, must reach its directory: the temporary parent
		// is 0700 and root's.
		if err := os.Chmod(filepath.Dir(base), 0o711); err != nil {
			return unavailable("%v", err)
		}
		if exec.Command("runuser", "-u", "postgres", "--", "test", "-x", base).Run() != nil {
			// A parent further up (TMPDIR under /root, say) is closed to other users: use /tmp.
			var err error
			if base, err = os.MkdirTemp("/tmp", "beangate-pg-"); err != nil {
				return unavailable("%v", err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(base) })
		}
	}
	tools, err := NewTools(base)
	if err != nil {
		return unavailable("%v", err)
	}
	c := &Cluster{t: t, tools: tools, data: filepath.Join(base, "data"), sock: base, log: filepath.Join(base, "server.log")}
	if out, err := c.tools.Command("initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
		"--no-sync", // only initdb's own files; the server keeps fsync on
	).CombinedOutput(); err != nil {
		return unavailable("initdb: %v\n%s", err, out)
	}
	for attempt := 1; ; attempt++ { // a free port may be taken before the server binds it
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return unavailable("%v", err)
		}
		c.port = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		err = c.start()
		if err == nil {
			break
		}
		if attempt == 3 {
			return unavailable("%v", err)
		}
	}
	t.Cleanup(func() { _ = c.tools.Command("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").Run() })
	return c
}

// start starts the server and waits until it accepts connections.
func (c *Cluster) start() error {
	opts := strings.Join([]string{"-p", strconv.Itoa(c.port), "-k", c.sock, "-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=40", "-c", "shared_buffers=16MB"}, " ")
	out, err := c.tools.Command("pg_ctl", "-D", c.data, "-l", c.log, "-o", opts, "-w", "-t", "30", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(c.log)
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Crash stops the server as a crash would (no shutdown checkpoint: recovery replays the WAL).
func (c *Cluster) Crash() {
	c.t.Helper()
	out, err := c.tools.Command("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").CombinedOutput()
	require.NoError(c.t, err, "pg_ctl stop: %s", out)
}

// Restart starts the server again.
func (c *Cluster) Restart() {
	c.t.Helper()
	require.NoError(c.t, c.start())
}

// URL is a DSN of the server's postgres database.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Stop shuts the server down cleanly (a fast shutdown: every committed transaction survives).
func (c *Cluster) Stop() {
	c.t.Helper()
	out, err := c.tools.Command("pg_ctl", "-D", c.data, "-m", "fast", "-w", "stop").CombinedOutput()
	require.NoError(c.t, err, "pg_ctl stop: %s", out)
}
