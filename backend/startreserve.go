package backend

import "context"

// ReserveStarter is an optional interface of a Backend whose waiting reserves need no goroutine
// of their own: the gateway starts the wait and goes on watching the client's socket on the same
// goroutine, and the backend hands the outcome to a callback on whichever goroutine decides it —
// typically the one whose put made a job ready — so the gateway can answer the waiting client
// from there, without first waking the client's goroutine. A backend without it is served
// through the blocking Reserve.
type ReserveStarter interface {
	// StartReserve is Reserve (with p.Timeout != 0) that does not block. It returns what Reserve
	// would return at once — a job, or an error — or, when Reserve would wait, a
	// PendingReserve. deliver is then called exactly once with the outcome — a job,
	// ErrTimedOut, ErrDeadlineSoon or a closing backend's error — unless Cancel gives the wait
	// up first. It is called from any goroutine, with no backend lock held, and must not call
	// the backend or block for long: the goroutine that calls it is serving another client.
	StartReserve(ctx context.Context, p ReserveParams, deliver func(*Job, error)) (*Job, PendingReserve, error)
}

// PendingReserve is a waiting reserve started by StartReserve.
type PendingReserve interface {
	// Cancel gives the wait up and reports whether it did. False means the outcome was decided
	// first: deliver has been called with it or is about to be (a job then stays reserved by the
	// session, as with a Reserve that returned it).
	Cancel() bool
}
