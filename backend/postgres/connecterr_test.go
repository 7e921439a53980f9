package postgres

import (
	"context"
	"errors"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// refusingServer is a PostgreSQL server, as pgx sees it, that refuses TLS and then every login
// with fail: what a server without TLS and with a password pgx was not given looks like.
func refusingServer(t *testing.T, fail *pgproto3.ErrorResponse) string {
	return loopbackServer(t, func(c net.Conn) {
		defer c.Close()
		be := pgproto3.NewBackend(c, c)
		for {
			msg, err := be.ReceiveStartupMessage()
			if err != nil {
				return
			}
			if _, ok := msg.(*pgproto3.SSLRequest); ok {
				_, _ = c.Write([]byte("N"))
				continue
			}
			be.Send(fail)
			_ = be.Flush()
			return
		}
	})
}

// pgx reports every attempt in order, one per line: with sslmode=prefer the TLS attempt the
// server refused comes first. The error leads with the attempt that tells the cause, on one
// line, and is still a *pgconn.PgError and a *pgconn.ConnectError to errors.As; a server that
// does not know a URL parameter is a bad option.
func TestConnectErrorLeadsWithTheCause(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		fail      *pgproto3.ErrorResponse
		wantWords string // before pgx's
		badOption bool
	}{
		{
			name: "WrongPassword",
			fail: &pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "app"`},
		},
		{
			name:      "UnknownParameter",
			fail:      &pgproto3.ErrorResponse{Severity: "FATAL", Code: "42704", Message: `unrecognized configuration parameter "prefx"`},
			wantWords: "postgres: URL: a parameter is neither beangate's nor pgx's, and the server does not know it either: ",
			badOption: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := refusingServer(t, tt.fail)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := pgconn.Connect(ctx, "postgres://app:pw@"+addr+"/queue?sslmode=prefer")
			require.Error(t, err)
			require.Contains(t, err.Error(), "tls error", "pgx tried TLS first")
			require.Contains(t, err.Error(), "\n", "pgx's text spans lines")

			err = startErr(err)
			msg := err.Error()
			require.NotContains(t, msg, "\n")
			attempt := `127\.0\.0\.1:\d+ \(127\.0\.0\.1\): `
			require.Regexp(t, `^`+regexp.QuoteMeta(tt.wantWords+"failed to connect to `user=app database=queue`: ")+
				attempt+regexp.QuoteMeta("server error: FATAL: "+tt.fail.Message+" (SQLSTATE "+tt.fail.Code+")")+
				` \(other attempts: `+attempt+`tls error: server refused TLS connection\)$`, msg)
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr))
			require.Equal(t, tt.fail.Code, pgErr.Code)
			var ce *pgconn.ConnectError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, tt.badOption, errors.Is(err, backend.ErrBadOptions))
			require.Equal(t, msg, startErr(err).Error(), "made readable once")
		})
	}
}

// Only at connect is undefined_object a URL parameter: from a statement it is the statement's.
func TestUndefinedObjectFromAStatementIsNoBadOption(t *testing.T) {
	t.Parallel()
	err := startErr(opErr("migration", &pgconn.PgError{Severity: "ERROR", Code: "42704", Message: `type "vector" does not exist`}))
	require.False(t, errors.Is(err, backend.ErrBadOptions))
	require.Equal(t, `postgres: migration: ERROR: type "vector" does not exist (SQLSTATE 42704)`, err.Error())
}
