package main

import (
	"context"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// beangate migrate reads a beanstalks:// source and writes a beanstalks:// destination, each
// with TLS settings of its own in its URL (mutual TLS included); a beanstalk:// URL for a TLS
// server, or the reverse, is told which way the server speaks; TLS parameters on a plain URL,
// or a certificate without its key, are usage errors.
func TestMigrateOverTLS(t *testing.T) {
	t.Parallel()
	g := startTLSGateways(t)
	f := g.files
	tlsSource := "beanstalks://" + g.tls + "?ca=" + f.ca
	mutualDest := "beanstalks://" + g.mutual + "?ca=" + f.ca + "&cert=" + f.cert + "&key=" + f.key + "&server_name=beangate"
	binlogDir := t.TempDir()
	tests := []struct {
		name     string
		put      string // the gateway the jobs are put on first
		args     []string
		exit     int
		contains string // in stdout when exit is 0, else in stderr
		moved    func(t *testing.T)
	}{
		{"beanstalks source", g.tls, []string{"--from", tlsSource, "--to", "binlog:" + binlogDir}, 0,
			"moved:            2 (ids kept: 2", func(t *testing.T) {
				b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: binlogDir}})
				require.NoError(t, err)
				defer b.Close()
				st, err := b.Stats(context.Background())
				require.NoError(t, err)
				require.Equal(t, uint64(2), st.ReadyJobs)
			}},
		{"beanstalks destination with mutual TLS", g.plain, []string{"--from", "beanstalk://" + g.plain, "--to", mutualDest}, 0,
			"moved:            2", func(t *testing.T) {
				st, err := g.tlsConn(t, g.mutual).Stats()
				require.NoError(t, err)
				require.Equal(t, "2", st["current-jobs-ready"])
			}},
		{"dry run on a beanstalks destination", g.plain, []string{"--from", "beanstalk://" + g.plain, "--to", mutualDest, "--dry-run"}, 0,
			"reachable: a beanstalk server", nil},
		{"beanstalk URL of a TLS server", "", []string{"--from", "beanstalk://" + g.tls, "--to", "binlog:" + t.TempDir()}, 1,
			"the server at " + g.tls + " speaks TLS; use beanstalks://" + g.tls, nil},
		{"beanstalks URL of a plain server", "", []string{"--from", "beanstalk://" + g.plain, "--to", "beanstalks://" + g.plain + "?ca=" + f.ca}, 1,
			"the server at " + g.plain + " does not speak TLS; use beanstalk://" + g.plain, nil},
		{"TLS parameter on a plain URL", "", []string{"--from", "beanstalk://" + g.tls + "?ca=" + f.ca, "--to", "binlog:" + t.TempDir()}, exitUsage,
			"ca= is a TLS setting: use beanstalks://", nil},
		{"a certificate without its key", "", []string{"--from", "beanstalk://" + g.plain, "--to", "beanstalks://" + g.mutual + "?cert=" + f.cert}, exitUsage,
			"cert= and key=: a client certificate and its key go together", nil},
		{"an unknown parameter", "", []string{"--from", "beanstalks://" + g.tls + "?cafile=" + f.ca, "--to", "binlog:" + t.TempDir()}, exitUsage,
			"unknown parameter cafile", nil},
	}
	for _, tt := range tests { // in order: each run moves what the one before left
		t.Run(tt.name, func(t *testing.T) {
			switch tt.put {
			case g.plain:
				putJobs(t, g.plain, "mail", "a", "b")
			case g.tls:
				tb := beanstalk.NewTube(g.tlsConn(t, g.tls), "mail")
				for _, body := range []string{"a", "b"} {
					_, err := tb.Put([]byte(body), 1, 0, time.Minute)
					require.NoError(t, err)
				}
			}
			exit, stdout, stderr := runArgs(t, append([]string{"migrate", "--progress", "none"}, tt.args...)...)
			require.Equal(t, tt.exit, exit, "stdout %q, stderr %q", stdout, stderr)
			if tt.exit == 0 {
				require.Contains(t, stdout, tt.contains)
			} else {
				require.Contains(t, stderr, tt.contains)
				require.NotContains(t, stderr, "EOF")
			}
			if tt.moved != nil {
				tt.moved(t)
			}
		})
	}
}
