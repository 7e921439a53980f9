package gateway

import (
	"errors"

	"github.com/beangate/beangate/backend"
)

// replyForError maps a backend error to its protocol reply: the one place where that happens.
// Anything that is not a sentinel is an infrastructure failure, answered INTERNAL_ERROR (and
// logged by the caller).
func replyForError(err error) (msg []byte, internal bool) {
	switch {
	case errors.Is(err, backend.ErrNotFound):
		return msgNotFound, false
	case errors.Is(err, backend.ErrTimedOut):
		return msgTimedOut, false
	case errors.Is(err, backend.ErrDeadlineSoon):
		return msgDeadlineSoon, false
	case errors.Is(err, backend.ErrOutOfMemory):
		return msgOutOfMemory, true // logged: an operator must free disk space
	}
	return msgInternalError, true
}
