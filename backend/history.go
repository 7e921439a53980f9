package backend

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A job's history: the events of its life, kept by the store beside the job (every gateway of
// a fleet sees them, and the store's own transitions — a TTR running out, a policy acting — are
// among them), bounded to the last MaxJobEvents and deleted with the job. It is kept for the
// jobs of tubes whose policy sets History (see Policies): it costs each event a write.
//
// Who acted is the session that made the call (put, reserved, released, buried by the worker,
// touched) or, for an event the store makes itself (timed out, holder left), the session that
// held the job; its address is the one the gateway registered with BeginSession, copied into the
// event, so that it outlives the session. Kicks carry no session: the protocol names none.

// MaxJobEvents is how many events a job's history keeps: the last ones.
const MaxJobEvents = 32

// EventKind is what happened to a job.
type EventKind string

// The events of a job's life.
const (
	EventPut        EventKind = "put"         // stored by Session (Delay: its delay)
	EventReserved   EventKind = "reserved"    // reserved by Session
	EventReleased   EventKind = "released"    // released by its holder (Delay: the client's delay)
	EventTimedOut   EventKind = "timed-out"   // its TTR ran out while Session held it
	EventHolderLeft EventKind = "holder-left" // Session, its holder, ended (a disconnect)
	EventBuried     EventKind = "buried"      // by its holder, or by Policy
	EventDelayed    EventKind = "delayed"     // by Policy (retry-delay) for Delay, as it came back
	EventKicked     EventKind = "kicked"      // made ready by a kick
	EventTouched    EventKind = "touched"     // its holder restarted its TTR
)

// JobEvent is one event of a job's history.
type JobEvent struct {
	At      time.Time
	Kind    EventKind
	Session SessionID     // who acted or held the job; "" when none (kicked, a policy alone)
	Addr    string        // that session's remote address as BeginSession registered it
	Delay   time.Duration // put, released: the delay asked for; delayed: the backoff
	Policy  string        // buried, delayed: the policy that acted (PolicyMaxReserves, ...); "" for the worker
}

// SessionInfo describes a session's client, registered once with BeginSession: the store keeps
// it with the session and copies it into the events the session causes.
type SessionInfo struct {
	Addr string // the client's remote address, "host:port"
}

// Histories is the part of Admin that reads jobs' histories.
type Histories interface {
	// JobHistory returns job id's events, oldest first: at most MaxJobEvents, empty when the
	// job's tube keeps no history. ErrNotFound if the job does not exist.
	JobHistory(ctx context.Context, id uint64) ([]JobEvent, error)
}

// AppendEvent appends e to h, keeping the last MaxJobEvents (the memory store's bound; the
// others trim in the store as they write).
func AppendEvent(h []JobEvent, e JobEvent) []JobEvent {
	if len(h) >= MaxJobEvents {
		h = append(h[:0], h[len(h)-MaxJobEvents+1:]...)
	}
	return append(h, e)
}

// ParseEvent reads an event as the Redis and PostgreSQL stores keep it, a line of text: "time
// kind session address delay policy", separated by single spaces, the last four possibly empty
// (none holds a space), time (since the epoch) and delay counted in unit.
func ParseEvent(s string, unit time.Duration) (JobEvent, error) {
	f := strings.Split(s, " ")
	if len(f) != 6 {
		return JobEvent{}, fmt.Errorf("%d fields", len(f))
	}
	at, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return JobEvent{}, fmt.Errorf("time: %w", err)
	}
	delay, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil {
		return JobEvent{}, fmt.Errorf("delay: %w", err)
	}
	return JobEvent{At: time.Unix(0, at*int64(unit)), Kind: EventKind(f[1]), Session: SessionID(f[2]),
		Addr: f[3], Delay: time.Duration(delay) * unit, Policy: f[5]}, nil
}
