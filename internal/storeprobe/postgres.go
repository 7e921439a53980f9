package storeprobe

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"

	beanpg "github.com/beangate/beangate/backend/postgres"
	"github.com/beangate/beangate/internal/procfs"
)

// postgresProbe reads CPU from /proc (the postmaster and all its children: the server must run
// on this machine), WAL volume and fsyncs from pg_stat_wal (PostgreSQL 14 and later) and
// commits from pg_stat_database.
type postgresProbe struct {
	conn       *pgx.Conn
	postmaster int
}

// openPostgresProbe takes the gateway's own backend URL (schema= and the like are dropped as the
// backend drops them).
func openPostgresProbe(ctx context.Context, url string) (*postgresProbe, error) {
	bo, err := beanpg.ParseURL(url)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(bo.DSN)
	if err != nil {
		return nil, err
	}
	pid, err := procfs.ListenerPID(net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	if err != nil {
		return nil, fmt.Errorf("postgres CPU needs a local server: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &postgresProbe{conn: conn, postmaster: pid}, nil
}

func (p *postgresProbe) Sample(ctx context.Context) (Sample, error) {
	s := Unknown
	var err error
	if s.CPU, err = procfs.TreeCPU(p.postmaster); err != nil {
		return s, err
	}
	var wal float64 // numeric in pg_stat_wal
	var syncs int64
	if p.conn.QueryRow(ctx, "SELECT wal_bytes::float8, wal_sync FROM pg_stat_wal").Scan(&wal, &syncs) == nil {
		s.WALBytes, s.Fsyncs = int64(wal), syncs
	}
	// Every database's: the gateway's, and the probe's own one read per sample (noise).
	var commits int64
	if p.conn.QueryRow(ctx, "SELECT sum(xact_commit)::int8 FROM pg_stat_database").Scan(&commits) == nil {
		s.Commits = commits
	}
	return s, nil
}

func (p *postgresProbe) Close() { _ = p.conn.Close(context.Background()) }
