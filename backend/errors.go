package backend

import "errors"

// The sentinel errors a Backend returns; the gateway maps each to one protocol reply. Any other
// error is an infrastructure failure (INTERNAL_ERROR).
var (
	// ErrNotFound: the job or tube does not exist, or is not in a state the caller may act on.
	ErrNotFound = errors.New("backend: not found")
	// ErrTimedOut: a reserve's timeout passed with no job.
	ErrTimedOut = errors.New("backend: timed out")
	// ErrDeadlineSoon: the reserving session holds a job whose TTR is about to expire.
	ErrDeadlineSoon = errors.New("backend: deadline soon")
	// ErrOutOfMemory: the store cannot take the change (a binlog that cannot reserve disk space);
	// beanstalkd's OUT_OF_MEMORY.
	ErrOutOfMemory = errors.New("backend: out of memory")
)

// ErrBadOptions marks a store that cannot be opened as configured, however often it is tried:
// its URL or options are wrong (an unknown parameter, a value that does not parse, a name the
// store refuses). Callers tell it with errors.Is; the text is the cause's own.
var ErrBadOptions = errors.New("backend: bad options")

// BadOptions marks err (nil stays nil) as ErrBadOptions, its text and chain unchanged.
func BadOptions(err error) error {
	if err == nil {
		return nil
	}
	return badOptions{err}
}

type badOptions struct{ error }

func (e badOptions) Unwrap() error        { return e.error }
func (e badOptions) Is(target error) bool { return target == ErrBadOptions }
