package gateway

import "time"

// Observer receives what the gateway measures, for metrics (package gateway/ops implements it
// with Prometheus). With Config.Observer nil nothing is measured: the hot path pays one nil
// check per command. Methods are called from connection goroutines, concurrently.
type Observer interface {
	// CommandDone reports one command line answered with res, d after it was read.
	CommandDone(cmd CommandID, res Result, d time.Duration)
	// ReserveWaited reports a reserve that got a job d after it was read.
	ReserveWaited(d time.Duration)
	// Tube returns the observer of one tube's jobs. A connection calls it when the tube of
	// the job it handles changes, and keeps the result.
	Tube(name string) TubeObserver
}

// TubeObserver receives the figures of one tube's jobs.
type TubeObserver interface {
	// ReadyWaited reports how long a job had been ready when a reserve took it.
	ReadyWaited(d time.Duration)
	// Processed reports the time from a job's reserve to its delete by the same connection.
	Processed(d time.Duration)
}

// CommandID names a command for metrics: its place in CommandNames.
type CommandID uint8

// commandAuth and commandUnknown follow the verb table's entries in CommandNames.
var (
	commandAuth    CommandID
	commandUnknown CommandID
)

// CommandNames lists every CommandID's name: the protocol's verbs, then "auth" and "unknown"
// (a line that matches no verb).
func CommandNames() []string {
	names := make([]string, 0, len(commands)+2)
	for _, c := range commands {
		names = append(names, c.name)
	}
	return append(names, "auth", "unknown")
}

// Result classifies a command's reply, for metrics.
type Result uint8

// The results: ResultOK for every success reply, one per error reply.
const (
	ResultOK Result = iota
	ResultBadFormat
	ResultUnknownCommand
	ResultExpectedCRLF
	ResultJobTooBig
	ResultDraining
	ResultInternalError
	ResultNotFound
	ResultTimedOut
	ResultDeadlineSoon
	ResultNotIgnored
	ResultUnauthorized
	NumResults
)

var resultNames = [NumResults]string{
	"ok", "bad_format", "unknown_command", "expected_crlf", "job_too_big", "draining",
	"internal_error", "not_found", "timed_out", "deadline_soon", "not_ignored", "unauthorized",
}

func (r Result) String() string { return resultNames[r] }

// resultOf classifies a fixed reply by identity: every reply is one of the msg variables.
func resultOf(msg []byte) Result {
	switch &msg[0] {
	case &msgBadFormat[0]:
		return ResultBadFormat
	case &msgUnknownCommand[0]:
		return ResultUnknownCommand
	case &msgExpectedCRLF[0]:
		return ResultExpectedCRLF
	case &msgJobTooBig[0]:
		return ResultJobTooBig
	case &msgDraining[0]:
		return ResultDraining
	case &msgInternalError[0]:
		return ResultInternalError
	case &msgNotFound[0]:
		return ResultNotFound
	case &msgTimedOut[0]:
		return ResultTimedOut
	case &msgDeadlineSoon[0]:
		return ResultDeadlineSoon
	case &msgNotIgnored[0]:
		return ResultNotIgnored
	case &msgUnauthorized[0]:
		return ResultUnauthorized
	}
	return ResultOK
}

// Rejection is why a connection was closed before it was served.
type Rejection uint8

// The rejections.
const (
	RejectMaxConnections Rejection = iota // --max-connections open already
	RejectHandshakeLimit                  // too many connections in the TLS handshake or unauthenticated
	RejectTLSHandshake                    // the TLS handshake failed or timed out
	RejectAuthFailed                      // a wrong token, or a command before auth
	RejectAuthTimeout                     // no auth within the handshake timeout
	NumRejections
)

var rejectionNames = [NumRejections]string{
	"max_connections", "handshake_limit", "tls_handshake", "auth_failed", "auth_timeout",
}

func (r Rejection) String() string { return rejectionNames[r] }

// Figures are this process's connection figures, for metrics.
type Figures struct {
	Connections      int64 // open now, served (past any handshake)
	TotalConnections uint64
	Producers        int64
	Workers          int64
	Waiting          int64 // in a reserve, waiting
	Handshaking      int64 // in the TLS handshake or not yet authenticated
	Rejected         [NumRejections]uint64
}

// Figures returns the current connection figures: under Access, the sum of every tenant's.
func (s *Server) Figures() Figures {
	st := s.stats
	f := Figures{
		Connections:      st.connections.Load(),
		TotalConnections: st.totalConnections.Load(),
		Producers:        st.producers.Load(),
		Workers:          st.workers.Load(),
		Waiting:          st.waiting.Load(),
		Handshaking:      s.handshaking.Load(),
	}
	for r := range f.Rejected {
		f.Rejected[r] = st.rejected[r].Load()
	}
	if s.access.Load() != nil {
		f.TotalConnections = s.totalConnections.Load()
		for _, other := range s.tenants.statsSets() {
			f.Connections += other.connections.Load()
			f.Producers += other.producers.Load()
			f.Workers += other.workers.Load()
			f.Waiting += other.waiting.Load()
		}
	}
	return f
}

// TubeWaiting is how many of the main store's connections wait in a reserve on tube
// (stats-tube's current-waiting), for the console; a Caller's is Caller.Waiting.
func (s *Server) TubeWaiting(tube string) int64 { return s.stats.tubeWaiting(tube) }

// ValidTubeName tells whether name is a tube name the protocol accepts, for callers outside it
// (the console) that create tubes.
func ValidTubeName(name string) bool { return validName([]byte(name)) }
