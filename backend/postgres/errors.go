package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// errClosed is returned by calls made after Close.
var errClosed = errors.New("postgres: backend closed")

// retryable reports errors after which the statement was rolled back and may simply run again:
// a deadlock between concurrent batches, or a serialization failure.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40P01" || pgErr.Code == "40001"
	}
	return false
}

// wrap turns a driver error into the infrastructure error the gateway answers with
// INTERNAL_ERROR, keeping context errors recognisable with errors.Is. Sentinels pass through.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("postgres: %s: command timed out: %w", op, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}
