// Package pgtest starts private PostgreSQL servers for tests that stop and restart them.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
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
	bin   string // directory of initdb, pg_ctl, postgres
	data  string
	sock  string
	log   string
	port  int
	runAs []string // prefix running a command as the postgres user when we are root
}

// PrivateCluster initdb's a cluster in a temporary directory and starts it on a free port with
// the server's default durability settings (fsync, synchronous_commit). initdb and postgres
// refuse to run as root: as root they run as the postgres user. Without the binaries the test
// fails when CI=true and is skipped elsewhere.
func PrivateCluster(t testing.TB) *Cluster {
	t.Helper()
	unavailable := func(format string, args ...any) *Cluster {
		t.Helper()
		backendtest.Unavailable(t, "private PostgreSQL cluster: "+format, args...)
		return nil
	}
	bin, err := postgresBinDir()
	if err != nil {
		return unavailable("%v", err)
	}
	base := t.TempDir()
	var runAs []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return unavailable("running as root and there is no postgres user to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		runAs = []string{"runuser", "-u", "postgres", "--"}
		// The server must reach its directory: the temporary parent is 0700 and root's.
		if err := os.Chmod(filepath.Dir(base), 0o711); err != nil {
			return unavailable("%v", err)
		}
		if exec.Command("runuser", "-u", "postgres", "--", "test", "-x", base).Run() != nil {
			// A parent further up (TMPDIR under /root, say) is closed to other users: use /tmp.
			if base, err = os.MkdirTemp("/tmp", "beangate-pg-"); err != nil {
				return unavailable("%v", err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(base) })
		}
		if err := os.Chown(base, uid, gid); err != nil {
			return unavailable("%v", err)
		}
	}
	c := &Cluster{t: t, bin: bin, data: filepath.Join(base, "data"), sock: base, log: filepath.Join(base, "server.log"), runAs: runAs}
	if out, err := c.command("initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
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
	t.Cleanup(func() { _ = c.command("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").Run() })
	return c
}

// postgresBinDir finds the newest /usr/lib/postgresql/<version>/bin holding initdb, or the
// directory of pg_ctl on PATH.
func postgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no initdb in /usr/lib/postgresql/*/bin or on PATH")
}

func versionOf(initdb string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(initdb))), 64)
	return v
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, c.runAs...), filepath.Join(c.bin, name)), args...)
	return exec.Command(argv[0], argv[1:]...)
}

// start starts the server and waits until it accepts connections.
func (c *Cluster) start() error {
	opts := strings.Join([]string{"-p", strconv.Itoa(c.port), "-k", c.sock, "-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=40", "-c", "shared_buffers=16MB"}, " ")
	out, err := c.command("pg_ctl", "-D", c.data, "-l", c.log, "-o", opts, "-w", "-t", "30", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(c.log)
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Crash stops the server as a crash would (no shutdown checkpoint: recovery replays the WAL).
func (c *Cluster) Crash() {
	c.t.Helper()
	out, err := c.command("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").CombinedOutput()
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
	out, err := c.command("pg_ctl", "-D", c.data, "-m", "fast", "-w", "stop").CombinedOutput()
	require.NoError(c.t, err, "pg_ctl stop: %s", out)
}
