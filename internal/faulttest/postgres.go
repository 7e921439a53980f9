package faulttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/beangate/beangate/backend/backendtest"
	"github.com/beangate/beangate/backend/postgres/pgtest"
)

// PGServer is one private PostgreSQL server of a PGPair.
type PGServer struct {
	pair *PGPair
	Name string
	Port int
	data string
	log  string
}

// PGPair is a private PostgreSQL primary and a streaming standby made from it with
// pg_basebackup, on loopback ports base (the primary) and base+1. Both listen on 127.0.0.1 and
// CutHost, so that a test can cut one client's path (see NetCut) and not another's.
// As root the servers run as the postgres user (see pgtest.Tools).
type PGPair struct {
	t       testing.TB
	tools   *pgtest.Tools
	dir     string
	Primary *PGServer
	Standby *PGServer
}

// StartPGPair starts the primary and its standby and waits until the standby streams. With
// sync, the primary waits for the standby to flush every durable commit
// (synchronous_standby_names = '*'), so a promotion loses no acknowledged commit.
func StartPGPair(t testing.TB, base int, sync bool) *PGPair {
	t.Helper()
	p := startPrimary(t, base, 2, sync)
	p.Standby = &PGServer{pair: p, Name: "standby", Port: base + 1, data: filepath.Join(p.dir, "standby"), log: filepath.Join(p.dir, "standby.log")}
	p.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Primary.Port), "-U", "postgres",
		"-D", p.Standby.data, "-R", "-X", "stream", "-c", "fast", "--no-sync")
	// A promoted standby has no standby of its own to wait for.
	p.appendConf(p.Standby, "synchronous_standby_names = ''")
	p.Standby.Start()
	p.WaitStreaming(30 * time.Second)
	return p
}

// StartPG starts a lone private PostgreSQL server (no standby) on port; its Primary is it. conf
// are lines added to its postgresql.conf.
func StartPG(t testing.TB, port int, conf ...string) *PGPair {
	t.Helper()
	return startPrimary(t, port, 1, false, conf...)
}

// startPrimary initdb's and starts the primary on base, checking that the ports base..base+n-1
// are free, with extra lines in its postgresql.conf.
func startPrimary(t testing.TB, base, n int, sync bool, extra ...string) *PGPair {
	t.Helper()
	FreePorts(t, base, n)
	p := &PGPair{t: t}
	var err error
	p.dir, err = os.MkdirTemp("/tmp", "beangate-faults-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(p.dir) })
	if p.tools, err = pgtest.NewTools(p.dir); err != nil {
		backendtest.Unavailable(t, "PostgreSQL: %v", err)
		return nil
	}
	p.Primary = &PGServer{pair: p, Name: "primary", Port: base, data: filepath.Join(p.dir, "primary"), log: filepath.Join(p.dir, "primary.log")}
	t.Cleanup(func() {
		for _, s := range []*PGServer{p.Primary, p.Standby} {
			if s != nil {
				_ = p.tools.Command("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop").Run()
			}
		}
	})
	p.run("initdb", "-D", p.Primary.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	conf := []string{
		"listen_addresses = '127.0.0.1," + CutHost + "'",
		"unix_socket_directories = '" + p.dir + "'",
		"max_connections = 60",
		"shared_buffers = 16MB",
		"wal_level = replica",
		"max_wal_senders = 5",
		"wal_keep_size = 64MB",
		"hot_standby = on",
		"wal_receiver_status_interval = 1s",
		// The faults here stop processes, never the machine: what a server wrote survives in
		// the kernel's page cache, so skipping fsync loses nothing these tests could see,
		// and keeps commits from waiting for a slow test disk.
		"fsync = off",
	}
	if sync {
		conf = append(conf, "synchronous_standby_names = '*'")
	}
	p.appendConf(p.Primary, append(conf, extra...)...)
	p.Primary.Start()
	return p
}

func (p *PGPair) run(name string, args ...string) {
	p.t.Helper()
	if out, err := p.tools.Command(name, args...).CombinedOutput(); err != nil {
		p.dumpLogs()
		p.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func (p *PGPair) appendConf(s *PGServer, lines ...string) {
	p.t.Helper()
	f, err := os.OpenFile(filepath.Join(s.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + strings.Join(lines, "\n") + "\n"); err != nil {
		p.t.Fatal(err)
	}
}

// Start starts the server (the standby's port is given on the command line: its
// configuration is a copy of the primary's) and waits until it accepts connections.
func (s *PGServer) Start() {
	s.pair.t.Helper()
	s.pair.run("pg_ctl", "-D", s.data, "-l", s.log, "-o", "-p "+strconv.Itoa(s.Port), "-w", "-t", "60", "start")
}

// StopImmediate stops the server as a crash would: no shutdown checkpoint, every connection
// dropped at once.
func (s *PGServer) StopImmediate() {
	s.pair.t.Helper()
	s.pair.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
}

// Promote makes a standby a primary and waits until it accepts writes.
func (s *PGServer) Promote() {
	s.pair.t.Helper()
	s.pair.run("pg_ctl", "-D", s.data, "-w", "-t", "60", "promote")
}

// Conn is a connection to the server's postgres database, closed when the test ends.
func (s *PGServer) Conn(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", s.Port))
}

// URL is the server's single-host URL through host (127.0.0.1 or CutHost), with query added.
func (s *PGServer) URL(host, query string) string {
	u := fmt.Sprintf("postgres://postgres@%s:%d/postgres?sslmode=disable&connect_timeout=3", host, s.Port)
	if query != "" {
		u += "&" + query
	}
	return u
}

// URL is the multi-host URL of the pair that finds whichever accepts writes (of a lone server:
// its URL), with query added.
func (p *PGPair) URL(query string) string {
	if p.Standby == nil {
		return p.Primary.URL("127.0.0.1", query)
	}
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=3",
		p.Primary.Port, p.Standby.Port)
	if query != "" {
		u += "&" + query
	}
	return u
}

// WaitStreaming waits until the primary reports the standby streaming (and, with a
// synchronous standby, in sync).
func (p *PGPair) WaitStreaming(within time.Duration) {
	p.t.Helper()
	var state string
	ok := waitFor(within, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := p.Primary.Conn(ctx)
		if err != nil {
			return false
		}
		defer c.Close(ctx)
		var syncNames string
		err = c.QueryRow(ctx, "SELECT coalesce((SELECT state || ' ' || sync_state FROM pg_stat_replication LIMIT 1), ''), current_setting('synchronous_standby_names')").Scan(&state, &syncNames)
		if err != nil {
			return false
		}
		want := "streaming async"
		if syncNames != "" {
			want = "streaming sync"
		}
		return state == want
	})
	if !ok {
		p.dumpLogs()
		p.t.Fatalf("the standby is not streaming after %v (replication state %q)", within, state)
	}
}

func (p *PGPair) dumpLogs() {
	for _, s := range []*PGServer{p.Primary, p.Standby} {
		if s == nil {
			continue
		}
		b, _ := os.ReadFile(s.log)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		p.t.Logf("--- %s log:\n%s", s.Name, b)
	}
}
