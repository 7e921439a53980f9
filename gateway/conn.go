package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/beangate/beangate/backend"
)

var errTooManyFiles = syscall.EMFILE

// readBufferSize holds many pipelined commands; bodies larger than it are read straight through.
const readBufferSize = 4096

// maxReadAhead bounds what a client may send while its reserve waits.
const maxReadAhead = 1 << 20

// levelTrace logs every command line (beanstalkd's -V).
const levelTrace = slog.LevelDebug

// maxPendingReplies: replies are flushed once this much is waiting, even mid-pipeline.
const maxPendingReplies = 64 << 10

// conn is one client connection and the session it carries. Its fields are touched only by its
// own goroutine, except where noted.
type conn struct {
	srv *Server
	nc  net.Conn
	raw *rawReader
	in  *lineReader
	out []byte // replies not yet written
	w   socketWriter

	sid      backend.SessionID
	begun    bool     // BeginSession succeeded
	use      string   // the used tube
	watch    []string // the watch list, in beanstalkd's order
	producer bool
	worker   bool
	waited   bool // the last reserve had to wait (see reserve)

	ctx      context.Context // ends when the connection ends or the server stops it
	cancel   context.CancelFunc
	stopping atomic.Bool     // set by Shutdown: end after the current command
	waiting  *waitingReserve // a ReserveStarter wait's hand-over; made at the first one

	authed bool // past token auth (always, without Config.Auth)
	gated  bool // counted in Server.handshaking until authenticated

	// For the Observer (unused without one): the command being run, when it was read, its
	// result, when its reply was made if not at its end, the reservations held, and the
	// TubeObserver of the last tube seen.
	cmdID      CommandID
	res        Result
	cmdStart   time.Time
	answeredAt time.Time
	held       []heldJob
	tubeName   string
	tubeObs    TubeObserver
}

func (s *Server) newConn(nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		srv:    s,
		nc:     nc,
		sid:    s.sessions.Next(),
		use:    backend.DefaultTube,
		watch:  []string{backend.DefaultTube},
		ctx:    ctx,
		cancel: cancel,
		authed: s.cfg.Auth == nil,
	}
	c.raw = &rawReader{nc: nc, beforeRead: c.flush}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw.rc, _ = sc.SyscallConn()
	}
	c.w = socketWriter{nc: nc, rc: c.raw.rc}
	c.in = newLineReader(c.raw, readBufferSize)
	return c
}

// serve runs the connection until the client leaves, sends quit, or the server stops it.
func (c *conn) serve() {
	st := c.srv.stats
	st.connections.Add(1)
	st.totalConnections.Add(1)
	defer c.finish()
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("connection panicked; closing it", "panic", p, "stack", string(debug.Stack()))
		}
	}()

	if c.authed {
		c.ensureSession() // an error is retried before the next command that needs the session
	}
	for !c.stopping.Load() {
		line, err := c.in.ReadLine()
		switch {
		case errors.Is(err, errLineTooLong):
			c.reply(msgBadFormat)
			continue
		case err != nil:
			if !c.authed {
				c.authTimedOut(err)
			}
			c.flush()
			return
		}
		if c.srv.log.Enabled(c.ctx, levelTrace) {
			c.trace(line)
		}
		var keepOpen bool
		switch {
		case !c.authed:
			keepOpen = c.authenticate(line)
		case c.srv.obs != nil:
			keepOpen = c.executeObserved(line)
		default:
			keepOpen = c.execute(line)
		}
		if !keepOpen {
			c.flush()
			return
		}
		if len(c.out) >= maxPendingReplies && !c.flush() {
			return
		}
	}
	c.flush()
}

// trace logs a command line (-V). Kept out of serve so that serve's frame stays small: an idle
// connection's goroutine then fits in the starting 2 KiB stack.
//
//go:noinline
func (c *conn) trace(line []byte) {
	if bytes.HasPrefix(line, []byte("auth ")) {
		line = []byte("auth <token not logged>")
	}
	c.srv.log.Log(c.ctx, levelTrace, "command", "session", c.sid, "line", fmt.Sprintf("%q", line))
}

// finish ends the session, returning its reservations, and then closes the socket: a client
// that sees EOF (after quit, say) and asks on another connection finds the jobs back and the
// tubes dropped, as beanstalkd does both before it reads anything else.
func (c *conn) finish() {
	c.cancel()
	defer func() { _ = c.nc.Close() }()
	c.passGate()
	st := c.srv.stats
	st.connections.Add(-1)
	if c.producer {
		st.producers.Add(-1)
	}
	if c.worker {
		st.workers.Add(-1)
	}
	if !c.begun {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.srv.cfg.BackendTimeout)
	defer cancel()
	if err := c.srv.cfg.Backend.EndSession(ctx, c.sid); err != nil {
		c.srv.log.Error("ending session failed; its reservations return when the backend ends it, at the latest at their TTR", "session", c.sid, "err", err)
	}
}

// stopAfterCommand asks the connection to end once its current command is done; a waiting
// reserve is cancelled and an idle read is interrupted. Safe from any goroutine.
func (c *conn) stopAfterCommand() {
	c.stopping.Store(true)
	c.cancel()
	_ = c.nc.SetReadDeadline(time.Now())
}

func (c *conn) ensureSession() error {
	if c.begun {
		return nil
	}
	if !c.srv.nonBlocking {
		return c.beginSessionBounded()
	}
	// A NonBlocking backend: no timeout context, and a small frame (see trace).
	if err := c.srv.cfg.Backend.BeginSession(c.ctx, c.sid); err != nil {
		c.logSessionError(err)
		return err
	}
	c.begun = true
	return nil
}

//go:noinline
func (c *conn) beginSessionBounded() error {
	ctx, cancel := c.callContext()
	defer cancel()
	if err := c.srv.cfg.Backend.BeginSession(ctx, c.sid); err != nil {
		c.logSessionError(err)
		return err
	}
	c.begun = true
	return nil
}

//go:noinline
func (c *conn) logSessionError(err error) {
	c.srv.log.Error("beginning session failed", "session", c.sid, "err", err)
}

// NonBlocking is an optional interface of a backend.Backend: a backend whose NonBlocking reports
// true answers every call without waiting on anything outside the process (only a Reserve with
// a timeout waits, and it is bounded separately), so its calls need no BackendTimeout bound.
type NonBlocking interface{ NonBlocking() bool }

func noCancel() {}

// callContext bounds a backend call that does not wait by design. For a NonBlocking backend it
// is the connection's own context: a timer and a context per command cost more than the call.
func (c *conn) callContext() (context.Context, context.CancelFunc) {
	if c.srv.nonBlocking {
		return c.ctx, noCancel
	}
	return context.WithTimeout(c.ctx, c.srv.cfg.BackendTimeout)
}

// reply queues a complete reply. Everything queued goes out in one write at the next flush, so a
// reply with a body always leaves in a single write with its trailing CRLF.
func (c *conn) reply(b []byte) {
	c.out = append(c.out, b...)
	c.res = resultOf(b)
}

// replyError answers a backend error; infrastructure failures are logged.
func (c *conn) replyError(op string, err error) {
	msg, internal := replyForError(err)
	if internal {
		c.srv.log.Error("backend failed", "op", op, "session", c.sid, "err", err)
	}
	c.reply(msg)
}

// flush writes the queued replies, reporting false if the connection is broken.
func (c *conn) flush() bool {
	if len(c.out) == 0 {
		return true
	}
	_, err := c.w.write(c.out, true)
	if cap(c.out) > maxPendingReplies {
		c.out = nil // do not keep a large buffer on an idle connection
	} else {
		c.out = c.out[:0]
	}
	return err == nil
}

// rawReader is the connection's byte source: bytes read ahead while a reserve was waiting (to
// notice a hang-up) are served first, then the socket. Before it reads the socket, which may
// block, it flushes the queued replies: so pipelined commands get their replies in one write,
// and no reply waits behind a read.
type rawReader struct {
	nc         net.Conn
	rc         syscall.RawConn // nc's, when it has one: lets an idle read wait without a buffer
	readFD     func(fd uintptr) bool
	bufp       *[]byte // tryRead's result: the buffer, the count and the error of its read
	n          int
	rerr       error
	beforeRead func() bool
	pending    []byte
	err        error // a read error seen while watching; returned once pending is drained
}

var errWriteFailed = errors.New("gateway: writing replies failed")

func (r *rawReader) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	if !r.beforeRead() {
		return 0, errWriteFailed
	}
	return r.nc.Read(p)
}

// errHangup: the client shut down its side while a reserve was waiting.
var errHangup = errors.New("gateway: client hung up")

// watchHangup reads ahead from the socket while the command loop waits in a reserve, so that a
// client closing its side ends the wait (beanstalkd answers TIMED_OUT to a half-close). It calls
// hangup with errHangup at EOF or a read error. stop ends the watch and must be called before
// the command loop reads again.
func (c *conn) watchHangup(hangup context.CancelCauseFunc) (stop func()) {
	var (
		done     = make(chan struct{})
		stopping atomic.Bool
		once     sync.Once
	)
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		for {
			n, err := c.nc.Read(buf)
			c.raw.pending = append(c.raw.pending, buf[:n]...)
			if len(c.raw.pending) > maxReadAhead {
				return // stop reading ahead; a hang-up now shows only after the wait
			}
			if err != nil {
				var ne net.Error
				if stopping.Load() && errors.As(err, &ne) && ne.Timeout() {
					return
				}
				c.raw.err = err
				hangup(errHangup)
				return
			}
		}
	}()
	return func() {
		once.Do(func() {
			stopping.Store(true)
			_ = c.nc.SetReadDeadline(time.Now())
			<-done
			if !c.stopping.Load() {
				_ = c.nc.SetReadDeadline(time.Time{})
			}
		})
	}
}

// watchHangupAfter is watchHangup started only once d has passed (at once for d <= 0); stop
// also cancels a watch that has not started yet, and reports whether it had started.
func (c *conn) watchHangupAfter(d time.Duration, hangup context.CancelCauseFunc) (stop func() (started bool)) {
	if d <= 0 {
		stopWatch := c.watchHangup(hangup)
		return func() bool { stopWatch(); return true }
	}
	var (
		mu        sync.Mutex
		stopped   bool
		stopWatch func()
	)
	timer := time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			stopWatch = c.watchHangup(hangup)
		}
	})
	return func() bool {
		timer.Stop()
		mu.Lock()
		stopped = true
		started := stopWatch
		mu.Unlock()
		if started != nil {
			started()
		}
		return started != nil
	}
}

// readAhead outcomes.
const (
	readAheadWoken = iota // the wait for input ended without input's end: a deadline was set
	readAheadInput        // input was read and kept in pending
	readAheadFull         // maxReadAhead bytes are waiting: reading ahead stops
	readAheadEnded        // end of input or a read error (kept in err for after the pending bytes)
)

// readAhead waits until the socket is readable or a read deadline passes, and keeps what it
// reads in pending. It serves a reserve waiting on the connection's own goroutine.
func (r *rawReader) readAhead() int {
	outcome := readAheadWoken
	had := len(r.pending)
	var buf [512]byte
	werr := r.rc.Read(func(fd uintptr) bool {
		for {
			n, err := readNow(fd, buf[:])
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN && len(r.pending) > had:
				outcome = readAheadInput
				return true
			case err == syscall.EAGAIN:
				return false // wait for input, a hang-up or the wake's deadline
			case err != nil:
				r.err, outcome = err, readAheadEnded
				return true
			case n == 0:
				r.err, outcome = io.EOF, readAheadEnded
				return true
			}
			r.pending = append(r.pending, buf[:n]...)
			if len(r.pending) > maxReadAhead {
				outcome = readAheadFull
				return true
			}
			if n < len(buf) {
				// Drained, most likely: no second read just to be told so. (If more came, the
				// next readAhead reads it before it waits.)
				outcome = readAheadInput
				return true
			}
		}
	})
	if werr != nil && outcome == readAheadWoken && !errors.Is(werr, os.ErrDeadlineExceeded) {
		r.err, outcome = werr, readAheadEnded // the socket was closed
	}
	return outcome
}

// readPooled serves pending bytes first, then flushes the queued replies and waits until the
// socket is readable before it takes a buffer from readBufs: a connection waiting for its next
// command holds no read buffer.
func (r *rawReader) readPooled() (*[]byte, int, error) {
	if len(r.pending) > 0 || r.err != nil || r.rc == nil {
		bufp := readBufs.Get().(*[]byte)
		n, err := r.Read(*bufp)
		return bufp, n, err
	}
	if !r.beforeRead() {
		return nil, 0, errWriteFailed
	}
	if r.readFD == nil {
		r.readFD = r.tryRead // one closure per connection, not one per read
	}
	// A RawConn.Read whose deadline has passed fails before it calls tryRead: a count left
	// from the read before would then pass for input that is not in any buffer.
	r.n, r.rerr = 0, nil
	err := r.rc.Read(r.readFD)
	bufp, n, rerr := r.bufp, r.n, r.rerr
	r.bufp, r.rerr = nil, nil
	if n < 0 {
		n = 0
	}
	switch {
	case err != nil:
		// The wait failed: a deadline (stopAfterCommand) or a closed socket. tryRead holds no
		// buffer then.
	case rerr != nil:
		err = rerr
	case n == 0:
		err = io.EOF
	}
	return bufp, n, err
}

// tryRead is readPooled's RawConn callback: it reads into a pooled buffer, and gives the buffer
// back and asks to wait when there is nothing to read.
func (r *rawReader) tryRead(fd uintptr) bool {
	if r.bufp == nil {
		r.bufp = readBufs.Get().(*[]byte)
	}
	for {
		r.n, r.rerr = readNow(fd, *r.bufp)
		if r.rerr != syscall.EINTR {
			break
		}
	}
	if r.rerr == syscall.EAGAIN {
		readBufs.Put(r.bufp) // nothing to read: wait without holding the buffer
		r.bufp = nil
		return false
	}
	return true
}

var (
	_ io.Reader    = (*rawReader)(nil)
	_ pooledSource = (*rawReader)(nil)
)
