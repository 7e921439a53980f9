package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/batch"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// errClosed answers the calls made after Close.
var errClosed = errors.New("backend closed")

// opErr is the one translation of what pgx, the batchers and the statements return into what
// the Backend returns: nil stays nil; pgx.ErrNoRows (a statement that found no row to act on)
// and backend.ErrNotFound are backend.ErrNotFound, which the gateway answers NOT_FOUND; anything
// else is an infrastructure failure (INTERNAL_ERROR), "postgres: <op>: <cause>", the cause still
// recognisable with errors.Is and errors.As (a caller's context.Canceled, a *pgconn.PgError).
// The text names the operation, never its arguments: job bodies and credentials stay out of
// logs (pgx's own connection errors leave the password out).
func opErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows), errors.Is(err, backend.ErrNotFound):
		return backend.ErrNotFound
	case errors.Is(err, batch.ErrClosed):
		err = errClosed
	case errors.Is(err, backend.ErrUnreachable):
		// known down: the call was not sent, whatever the failure that showed it
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("postgres: %s: command timed out: %w", op, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, readableConnectError(err))
}

// retryable reports errors after which the statement was rolled back and may simply run again:
// a deadlock between concurrent batches, or a serialization failure.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40P01" || pgErr.Code == "40001"
	}
	return false
}
