package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	beanpg "github.com/beangate/beangate/backend/postgres"
)

//go:embed floor_postgres.sql
var floorPostgresSQL string

// postgresFloor runs floor_postgres.sql's statements in a scratch schema: a round trip is one
// pgx batch (one transaction, one synchronous commit) of a put, a reserve and a delete statement
// for as many jobs as the round trip's operations of each kind; a round trip of reserves alone
// commits without waiting for its WAL flush, as beangate's reserve does.
type postgresFloor struct {
	conn   *pgx.Conn
	schema string
	stmts  map[string]string
	body   []byte
}

func openPostgresFloor(ctx context.Context, url string, body int) (*postgresFloor, error) {
	bo, err := beanpg.ParseURL(url)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, bo.DSN)
	if err != nil {
		return nil, err
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	f := &postgresFloor{conn: conn, schema: "beangate_floor_" + hex.EncodeToString(suffix[:]),
		body: make([]byte, body)}
	if f.stmts, err = floorStatements(floorPostgresSQL, f.schema); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	// synchronous_commit on whatever the server's default, as beangate's writes commit.
	for _, q := range []string{"SET synchronous_commit = on", f.stmts["schema"]} {
		if _, err := conn.Exec(ctx, q); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// floorStatements splits the file at its "-- name: <name>" lines.
func floorStatements(file, schema string) (map[string]string, error) {
	out := map[string]string{}
	name := ""
	for _, line := range strings.Split(file, "\n") {
		if n, ok := strings.CutPrefix(line, "-- name: "); ok {
			name = strings.TrimSpace(n)
			continue
		}
		if name != "" {
			out[name] += strings.ReplaceAll(line, "{{schema}}", schema) + "\n"
		}
	}
	for _, want := range []string{"schema", "put", "reserve", "reserve alone", "delete"} {
		if strings.TrimSpace(out[want]) == "" {
			return nil, fmt.Errorf("floor_postgres.sql: no statement %q", want)
		}
	}
	return out, nil
}

func (f *postgresFloor) roundTrip(ctx context.Context, ops []byte) error {
	var n [3]int
	for _, op := range ops {
		n[strings.IndexByte("prd", op)]++
	}
	b := &pgx.Batch{}
	if n[0] > 0 {
		b.Queue(f.stmts["put"], n[0], f.body)
	}
	switch {
	case n[1] > 0 && n[0]+n[2] == 0:
		b.Queue(f.stmts["reserve alone"], n[1])
	case n[1] > 0:
		b.Queue(f.stmts["reserve"], n[1])
	}
	if n[2] > 0 {
		b.Queue(f.stmts["delete"], n[2])
	}
	return f.conn.SendBatch(ctx, b).Close()
}

// settle vacuums the table (this cluster may run without autovacuum), so that rounds do not
// slow down on the dead rows of earlier ones.
func (f *postgresFloor) settle(ctx context.Context) error {
	_, err := f.conn.Exec(ctx, "VACUUM "+f.schema+".jobs")
	return err
}

func (f *postgresFloor) Close() {
	ctx := context.Background()
	_, _ = f.conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+f.schema+" CASCADE")
	_ = f.conn.Close(ctx)
}
