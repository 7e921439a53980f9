package main

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"

	beanpg "github.com/beangate/beangate/backend/postgres"
)

// postgresProbe reads CPU from /proc (the postmaster and all its children: the server must run
// on this machine) and WAL volume from pg_stat_wal (PostgreSQL 14 and later).
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
	pid, err := pidListeningOn(net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	if err != nil {
		return nil, fmt.Errorf("postgres CPU needs a local server: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &postgresProbe{conn: conn, postmaster: pid}, nil
}

func (p *postgresProbe) sample(ctx context.Context) (storeSample, error) {
	s := storeSample{commands: -1, fcalls: -1, walBytes: -1}
	var err error
	if s.cpu, err = processTreeCPU(p.postmaster); err != nil {
		return s, err
	}
	var wal float64 // numeric in pg_stat_wal
	if p.conn.QueryRow(ctx, "SELECT wal_bytes::float8 FROM pg_stat_wal").Scan(&wal) == nil {
		s.walBytes = int64(wal)
	}
	return s, nil
}

func (p *postgresProbe) Close() { _ = p.conn.Close(context.Background()) }
