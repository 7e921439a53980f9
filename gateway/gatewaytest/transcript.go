package gatewaytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Transcript is a scripted session of one or more connections with the exact bytes expected
// back. The same transcripts run against every backend and against a real beanstalkd.
type Transcript struct {
	Name  string
	Steps []Step
	// MaxJobSize, when set, runs the server with that -z.
	MaxJobSize uint32
	// Differs says why the real beanstalkd answers otherwise (a bug of its that we do not copy,
	// or 1.12 behaviour that 1.13 changed); the differential test skips such transcripts.
	Differs string
	// Version "1.13" marks 1.13 behaviour that 1.12 did otherwise: not played in 1.12 mode
	// (--compat 1.12), where Transcripts112 covers 1.12's.
	Version string
}

// Step is one action on connection Conn (0 is the first; connections open on first use).
type Step struct {
	Conn int
	Send string
	// Expect is the reply pattern (see Pattern). Empty: nothing must arrive for a short while.
	Expect string
	// Then: the step after sending: Close, CloseWrite, Closed (expect the server to close).
	Then Action
	// Sleep pauses before the step (for real-time delays; keep them short).
	Sleep time.Duration
}

// Action is something done after a step's exchange.
type Action int

// Actions.
const (
	None       Action = iota
	Close             // close the connection
	CloseWrite        // half-close it
	Closed            // require that the server closes it
	Async             // do not wait for the reply now; a later step with no Send waits for it
)

// Play runs tr against the server at addr. lenientQuotes accepts beanstalkd 1.12's unquoted
// YAML strings.
func Play(t *testing.T, addr string, tr Transcript, lenientQuotes bool) {
	t.Helper()
	clients := map[int]*Client{}
	client := func(i int) *Client {
		if clients[i] == nil {
			clients[i] = Dial(t, addr)
		}
		return clients[i]
	}
	for i, st := range tr.Steps {
		if st.Sleep > 0 {
			time.Sleep(st.Sleep)
		}
		c := client(st.Conn)
		where := fmt.Sprintf("step %d (conn %d, send %q)", i, st.Conn, st.Send)
		if st.Send != "" {
			c.Send(st.Send)
		}
		switch {
		case st.Then == Async:
		case st.Expect == "":
			require.Empty(t, c.readQuiet(), "%s: expected no reply", where)
		default:
			_, err := c.expect(Pattern(st.Expect, lenientQuotes))
			require.NoError(t, err, where)
		}
		switch st.Then {
		case Close:
			c.Close()
			delete(clients, st.Conn)
		case CloseWrite:
			c.CloseWrite()
		case Closed:
			c.ExpectClosed()
			delete(clients, st.Conn)
		}
	}
	for i, c := range clients {
		require.Empty(t, c.readQuiet(), "conn %d: unexpected bytes at the end", i)
	}
}
