package backend

import "context"

// ReserveStarter is an optional interface of a Backend whose waiting reserves need no goroutine
// of their own: the gateway starts the wait, goes on watching the client's socket for a hang-up
// on the same goroutine, and is woken when the outcome is decided. A backend without it is
// served through the blocking Reserve.
type ReserveStarter interface {
	// StartReserve is Reserve (with p.Timeout != 0) that does not block. It returns what Reserve
	// would return at once — a job, or an error — or, when Reserve would wait, a
	// PendingReserve. wake is then called exactly once, from any goroutine and possibly with the
	// backend's locks held (so it must not block or call the backend), when the outcome is
	// decided: a job, ErrTimedOut, ErrDeadlineSoon or a closing backend's error. wake is called
	// before the outcome becomes visible to Result, so a caller that has seen the outcome has
	// also seen wake's effect, and one woken by wake can Wait for the outcome without delay.
	StartReserve(ctx context.Context, p ReserveParams, wake func()) (*Job, PendingReserve, error)
}

// PendingReserve is a waiting reserve started by StartReserve. Its outcome is taken once, by
// Result (after wake), Wait, or Cancel.
type PendingReserve interface {
	// Result returns the outcome if it is decided; decided is false before wake is called.
	Result() (job *Job, err error, decided bool)
	// Wait blocks until the outcome is decided and returns it.
	Wait() (*Job, error)
	// Cancel gives the wait up. If the outcome was decided first it is returned (a job then
	// stays reserved by the session, as with a Reserve that returned it); otherwise both are nil.
	Cancel() (*Job, error)
}
