package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/beangate/beangate/backend"
)

// startErr is how a failure to start (connect, migrate, check) reads. pgx sends the URL's
// parameters it does not know itself to the server as settings, so a parameter the server does
// not recognise is a mistyped URL: backend.ErrBadOptions. A connection error leads with its
// telling attempt (see connectError).
func startErr(err error) error {
	err = readableConnectError(err)
	var ce *pgconn.ConnectError
	var pgErr *pgconn.PgError
	// At connect, undefined_object is an unrecognized configuration parameter.
	if errors.As(err, &ce) && errors.As(err, &pgErr) && pgErr.Code == "42704" && !errors.Is(err, backend.ErrBadOptions) {
		return backend.BadOptions(fmt.Errorf("postgres: URL: a parameter is neither beangate's nor pgx's, and the server does not know it either: %w", err))
	}
	return err
}

// connectError is an error holding a *pgconn.ConnectError, its text on one line and leading
// with the attempt that says what is wrong: pgx tries each address, with sslmode=prefer first
// with TLS and then without, and lists every attempt in order, so that a wrong password came
// after a "server refused TLS connection" that is no problem at all.
type connectError struct {
	err error // the original, whose chain holds the ConnectError
	msg string
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// readableConnectError returns err as a connectError when its chain holds a
// *pgconn.ConnectError, else err unchanged. The telling attempt is the last one the server
// answered with an error of its own (a wrong password, an unknown database), else the last one.
func readableConnectError(err error) error {
	var ce *pgconn.ConnectError
	var done *connectError
	if !errors.As(err, &ce) || errors.As(err, &done) {
		return err
	}
	attempts := []error{errors.Unwrap(ce)}
	if joined, ok := attempts[0].(interface{ Unwrap() []error }); ok {
		attempts = joined.Unwrap()
	}
	if len(attempts) == 0 || attempts[0] == nil {
		return err
	}
	telling := len(attempts) - 1
	for i, a := range attempts {
		var pgErr *pgconn.PgError
		if errors.As(a, &pgErr) {
			telling = i
		}
	}
	msg := fmt.Sprintf("failed to connect to `user=%s database=%s`: %s", ce.Config.User, ce.Config.Database, oneLine(attempts[telling]))
	var others []string
	for i, a := range attempts {
		if i != telling && oneLine(a) != oneLine(attempts[telling]) {
			others = append(others, oneLine(a))
		}
	}
	if len(others) > 0 {
		msg += " (other attempts: " + strings.Join(others, "; ") + ")"
	}
	// What wrapped it keeps its words around the connect error's.
	return &connectError{err: err, msg: strings.Replace(err.Error(), ce.Error(), msg, 1)}
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }
