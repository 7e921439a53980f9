package redis

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/batch"
)

// errClosed answers the calls made after Close.
var errClosed = errors.New("backend closed")

// opErr is the one translation of what go-redis, the batcher and the scripts return into what
// the Backend returns: nil stays nil; goredis.Nil (a script returning false) and
// backend.ErrNotFound are backend.ErrNotFound, which the gateway answers NOT_FOUND; anything else
// is an infrastructure failure (INTERNAL_ERROR), "redis: <op>: <cause>", the cause still
// recognisable with errors.Is and errors.As (a caller's context.Canceled, a goredis.Error). The
// text names the operation, never its arguments: job bodies and credentials stay out of logs.
func opErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, goredis.Nil), errors.Is(err, backend.ErrNotFound):
		return backend.ErrNotFound
	case errors.Is(err, batch.ErrClosed):
		err = errClosed
	case errors.Is(err, backend.ErrUnreachable):
		// known down: the call was not sent, whatever the failure that showed it
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("redis: %s: command timed out: %w", op, err)
	}
	return fmt.Errorf("redis: %s: %w", op, err)
}
