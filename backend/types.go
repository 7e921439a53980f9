package backend

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"time"
)

// State is a job's state.
type State int

// The four job states.
const (
	Ready State = iota + 1
	Delayed
	Reserved
	Buried
)

// String returns the state's name as stats-job prints it.
func (s State) String() string {
	switch s {
	case Ready:
		return "ready"
	case Delayed:
		return "delayed"
	case Reserved:
		return "reserved"
	case Buried:
		return "buried"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Job is a job's identity and payload, as reserve and peek return it.
type Job struct {
	ID       uint64
	Tube     string
	Priority uint32
	Body     []byte
	// ReadyFor is how long the job had been ready when this reserve took it, if the store
	// tells (HasReadyFor): the queueing time an operator alerts on. Reserve only.
	ReadyFor    time.Duration
	HasReadyFor bool
}

// JobStats is what stats-job reports about one job.
type JobStats struct {
	ID       uint64
	Tube     string
	State    State
	Priority uint32
	Age      time.Duration // since put
	Delay    time.Duration // as last given by put or release, or the retry backoff it was given
	TTR      time.Duration
	TimeLeft time.Duration // reserved: until the deadline; delayed: until ready; else 0
	Reserves uint32
	Timeouts uint32
	Releases uint32
	Buries   uint32
	Kicks    uint32
	File     uint64 // the binlog file holding the job's latest full record; 0 without a binlog
}

// TubeStats is what stats-tube reports about one tube, less the connection figure
// current-waiting, which the gateway counts.
type TubeStats struct {
	Name          string
	UrgentJobs    uint64 // ready with priority < UrgentPriority
	ReadyJobs     uint64
	ReservedJobs  uint64
	DelayedJobs   uint64
	BuriedJobs    uint64
	TotalJobs     uint64 // put into this tube since it was created
	Using         uint64 // sessions using it
	Watching      uint64 // sessions watching it
	CmdDelete     uint64 // successful deletes of its jobs
	CmdPauseTube  uint64 // successful pauses
	Pause         time.Duration
	PauseTimeLeft time.Duration
}

// Stats are the store-wide figures of the stats command.
type Stats struct {
	UrgentJobs   uint64
	ReadyJobs    uint64
	ReservedJobs uint64
	DelayedJobs  uint64
	BuriedJobs   uint64
	TotalJobs    uint64 // jobs put since the store began
	JobTimeouts  uint64 // TTR expiries since the store began
	Tubes        uint64 // tubes that exist now
	Binlog       BinlogStats
}

// BinlogStats are the binlog figures of the stats command; zero for a store without one.
type BinlogStats struct {
	OldestIndex     uint64
	CurrentIndex    uint64
	RecordsMigrated uint64
	RecordsWritten  uint64
	MaxSize         int64 // 0: beanstalkd's default is printed
	WriteErrors     uint64
}

// SessionID names one client connection, uniquely across every gateway process sharing a store.
// Its form is "<process>.<n>": Process() tells which gateway process it belongs to.
type SessionID string

// Process returns the gateway-process part of the id.
func (s SessionID) Process() string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return string(s[:i])
		}
	}
	return string(s)
}

// SessionIDs hands out SessionIDs for one gateway process: a random process id plus a counter.
type SessionIDs struct {
	process string
	next    atomic.Uint64
}

// NewSessionIDs returns a generator with a fresh random process id.
func NewSessionIDs() *SessionIDs {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return &SessionIDs{process: hex.EncodeToString(b[:])}
}

// Process is this generator's process id, shared by every SessionID it makes.
func (g *SessionIDs) Process() string { return g.process }

// Next returns a new SessionID.
func (g *SessionIDs) Next() SessionID {
	return SessionID(fmt.Sprintf("%s.%d", g.process, g.next.Add(1)))
}
