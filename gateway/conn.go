package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
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
	store    backend.Backend // the connection's tenant's store (Config.Backend without tenants)
	acl      *connAccess     // its principal and grants; nil without Config.Access
	ctr      *serverStats    // its tenant's figures, where it is counted (Server.stats without tenants)
	counted  bool            // counted in ctr's connections (serve has begun)
	begun    bool            // BeginSession succeeded
	use      string          // the used tube
	watch    []string        // the watch list, in beanstalkd's order
	producer bool
	worker   bool

	// ctx bounds the backend calls of the connection's commands: it ends with the connection,
	// or when Close cuts it, never at a graceful stop, so that a command already read is
	// carried out and answered for real.
	ctx      context.Context
	cancel   context.CancelFunc
	stopping atomic.Bool     // set by Shutdown: answer what has arrived, then end (see stopAfterCommand)
	waiting  *waitingReserve // a waiting reserve's hand-over; made at the first one

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
		store:  s.cfg.Backend,
		ctr:    s.stats,
		use:    backend.DefaultTube,
		watch:  []string{backend.DefaultTube},
		ctx:    ctx,
		cancel: cancel,
		authed: !s.authRequired(),
	}
	c.raw = &rawReader{c: c, nc: nc}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw.rc, _ = sc.SyscallConn()
	} else if tc, ok := nc.(*tls.Conn); ok {
		if sc, ok := tc.NetConn().(syscall.Conn); ok {
			c.raw.socket, _ = sc.SyscallConn()
		}
	}
	c.w = socketWriter{nc: nc, rc: c.raw.rc}
	c.in = newLineReader(c.raw, readBufferSize)
	if a := s.access.Load(); a != nil {
		c.ctr = s.unidentified
		c.identify(a)
	}
	return c
}

// serve runs the connection until the client leaves, sends quit, or the server stops it: then
// it ends once it has answered every command that had arrived (see stopAfterCommand).
func (c *conn) serve() {
	st := c.ctr
	st.connections.Add(1)
	st.totalConnections.Add(1)
	c.counted = true
	if c.acl != nil {
		c.srv.totalConnections.Add(1)
	}
	defer c.finish()
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("connection panicked; closing it", "panic", p, "stack", string(debug.Stack()))
		}
	}()

	if c.authed {
		if c.gated { // identified by its client certificate: no auth to wait for
			_ = c.nc.SetReadDeadline(time.Time{})
			c.passGate()
		}
		c.ensureSession() // an error is retried before the next command that needs the session
	}
	for {
		line, err := c.in.ReadLine() // errStopped once stopped with nothing more arrived
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
	defer c.closeSocket()
	c.passGate()
	st := c.ctr
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
	if err := c.store.EndSession(ctx, c.sid); err != nil {
		c.srv.failures.Failed("ending session failed; its reservations return when the backend ends it, at the latest at their TTR", err, "session", c.sid)
	}
}

// stopAfterCommand asks the connection to end gracefully; safe from any goroutine. The command
// being run is carried out (its backend calls keep c.ctx) and answered, and so is every command
// that has arrived by the time the connection looks for its next one; a reserve waiting for a
// job answers TIMED_OUT, as beanstalkd answers a waiting client that half-closes. Then the
// connection ends (see closeSocket). The passed read deadline wakes a connection blocked in a
// read or a reserve's wait; from then on a read waits only for the rest of a command begun
// (stopWoke), bounded by Close.
func (c *conn) stopAfterCommand() {
	c.stopping.Store(true)
	_ = c.nc.SetReadDeadline(time.Now())
}

// stopWoke reports whether err is the stop's wake-up of an authenticated connection and, if so,
// clears the read deadline for the reads that finish the connection's commands. It is cleared
// at each wake-up: stopAfterCommand's deadline may land after an earlier clearing. A
// connection that has not authenticated just ends.
func (c *conn) stopWoke(err error) bool {
	if !c.stopping.Load() || !c.authed || !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	_ = c.nc.SetReadDeadline(time.Time{})
	return true
}

// finishing reports whether the server is stopping the connection and it is answering what has
// arrived: a read at the start of a command then takes only what is there.
func (c *conn) finishing() bool { return c.stopping.Load() && c.authed }

// Lingering after a graceful stop (closeSocket): until the client has been quiet this long,
// and at most lingerMax.
const (
	lingerQuiet = 250 * time.Millisecond
	lingerMax   = 2 * time.Second
)

// closeSocket closes the connection. After a graceful stop it first ends the sending side (FIN),
// then reads and drops what the client still sends until it closes its own side or goes quiet:
// a socket closed with input unread makes the kernel answer RST, and the client would see
// "connection reset by peer" instead of the end of its replies. Close cuts the wait.
func (c *conn) closeSocket() {
	defer func() { _ = c.nc.Close() }()
	if !c.stopping.Load() {
		return
	}
	cw, ok := c.nc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	bufp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bufp)
	until := time.Now().Add(lingerMax)
	for left := lingerMax; left > 0; left = time.Until(until) {
		_ = c.nc.SetReadDeadline(time.Now().Add(min(lingerQuiet, left)))
		if _, err := c.nc.Read(*bufp); err != nil {
			return // the client's EOF, quiet, or Close
		}
	}
}

func (c *conn) ensureSession() error {
	if c.begun {
		return nil
	}
	if !c.srv.inProcess {
		return c.beginSessionBounded()
	}
	// An in-process store: no timeout context, and a small frame (see trace).
	if err := c.store.BeginSession(c.ctx, c.sid, c.sessionInfo()); err != nil {
		c.logSessionError(err)
		return err
	}
	c.begun = true
	return nil
}

// sessionInfo is what the store keeps of the client with its session (the jobs' histories name
// who put and who reserved by it).
func (c *conn) sessionInfo() backend.SessionInfo {
	var info backend.SessionInfo
	if a := c.nc.RemoteAddr(); a != nil {
		info.Addr = a.String()
	}
	return info
}

//go:noinline
func (c *conn) beginSessionBounded() error {
	ctx, cancel := c.callContext()
	defer cancel()
	if err := c.store.BeginSession(ctx, c.sid, c.sessionInfo()); err != nil {
		c.logSessionError(err)
		return err
	}
	c.begun = true
	return nil
}

//go:noinline
func (c *conn) logSessionError(err error) {
	c.srv.failures.Failed("beginning session failed", err, "session", c.sid)
}

func noCancel() {}

// callContext bounds a backend call that does not wait by design. For an in-process store it is
// the connection's own context: a timer and a context per command cost more than the call.
func (c *conn) callContext() (context.Context, context.CancelFunc) {
	if c.srv.inProcess {
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

// replyError answers a backend error; infrastructure failures are logged (the first of a run,
// then a summary a second).
func (c *conn) replyError(op string, err error) {
	msg, internal := replyForError(err)
	if internal {
		c.srv.failures.Failed("backend failed", err, "op", op, "session", c.sid)
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
	c       *conn
	nc      net.Conn
	rc      syscall.RawConn // nc's, when it has one: lets an idle read wait without a buffer
	socket  syscall.RawConn // without rc (TLS): the socket under nc, to see whether input waits
	readFD  func(fd uintptr) bool
	bufp    *[]byte // tryRead's result: the buffer, the count and the error of its read
	n       int
	rerr    error
	noWait  bool // tryRead returns at once on an empty socket (errStopped) instead of waiting
	pending []byte
	err     error // a read error seen while watching; returned once pending is drained
}

var (
	errWriteFailed = errors.New("gateway: writing replies failed")
	// errStopped: the server stopped the connection and nothing more has arrived.
	errStopped = errors.New("gateway: connection stopped by the server")
)

func (r *rawReader) Read(p []byte) (int, error) { return r.read(p, false) }

// read is Read; atCommand: see pooledSource.
func (r *rawReader) read(p []byte, atCommand bool) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	if !r.c.flush() {
		return 0, errWriteFailed
	}
	for {
		if atCommand && r.c.finishing() {
			return r.readArrived(p)
		}
		n, err := r.nc.Read(p)
		if n > 0 || !r.c.stopWoke(err) {
			return n, err
		}
	}
}

// readArrived is a stopped connection's read at the start of a command without a RawConn (TLS):
// what the connection has buffered, else, if the socket holds input, that input (waiting for
// the rest of a TLS record), else errStopped.
func (r *rawReader) readArrived(p []byte) (int, error) {
	_ = r.nc.SetReadDeadline(aLongTimeAgo) // a read then takes only what is buffered
	n, err := r.nc.Read(p)
	_ = r.nc.SetReadDeadline(time.Time{})
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	if r.socket == nil || !inputWaits(r.socket) {
		return 0, errStopped
	}
	for {
		n, err := r.nc.Read(p)
		if n > 0 || !r.c.stopWoke(err) {
			return n, err
		}
	}
}

// inputWaits reports whether the socket has input (or its end, or an error) to read.
func inputWaits(rc syscall.RawConn) bool {
	waits := false
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		for {
			_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if err != syscall.EINTR {
				waits = err != syscall.EAGAIN
				return
			}
		}
	})
	return waits
}

// errHangup: the client shut down its side while a reserve was waiting.
var errHangup = errors.New("gateway: client hung up")

// watchHangup reads ahead from the socket while the command loop waits in a reserve, so that a
// client closing its side ends the wait (beanstalkd answers TIMED_OUT to a half-close). It calls
// hangup with errHangup at EOF or a read error, and when the server stops the connection (the
// wait then answers TIMED_OUT too). stop ends the watch and must be called before the command
// loop reads again.
func (c *conn) watchHangup(hangup context.CancelCauseFunc) (stop func()) {
	var (
		done     = make(chan struct{})
		stopping atomic.Bool
		once     sync.Once
	)
	go func() {
		defer close(done)
		if c.stopping.Load() {
			hangup(errHangup) // a stopped connection does not wait: the reserve answers TIMED_OUT
			return
		}
		buf := make([]byte, 512)
		for {
			n, err := c.nc.Read(buf)
			c.raw.pending = append(c.raw.pending, buf[:n]...)
			if len(c.raw.pending) > maxReadAhead {
				return // stop reading ahead; a hang-up now shows only after the wait
			}
			if err != nil {
				var ne net.Error
				timeout := errors.As(err, &ne) && ne.Timeout()
				if timeout && stopping.Load() {
					return
				}
				if timeout && c.stopping.Load() {
					hangup(errHangup) // the stop's wake-up: not the client's end
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

// readAhead outcomes.
const (
	readAheadWoken = iota // the wait for input ended without input's end: a deadline was set
	readAheadInput        // input was read and kept in pending
	readAheadFull         // maxReadAhead bytes are waiting: reading ahead stops
	// readAheadEnded: end of input or a read error (kept in err for after the pending bytes),
	// or the server is stopping the connection (nothing kept: the input is still read).
	readAheadEnded
)

// readAhead waits until the socket is readable or a read deadline passes, and keeps what it
// reads in pending. It serves a reserve waiting on the connection's own goroutine.
func (r *rawReader) readAhead() int {
	if r.c.stopping.Load() {
		return readAheadEnded // a stopped connection does not wait: the reserve answers TIMED_OUT
	}
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
// command holds no read buffer. A stopped connection at the start of a command does not wait:
// with nothing arrived it returns errStopped.
func (r *rawReader) readPooled(atCommand bool) (*[]byte, int, error) {
	if len(r.pending) > 0 || r.err != nil || r.rc == nil {
		bufp := readBufs.Get().(*[]byte)
		n, err := r.read(*bufp, atCommand)
		return bufp, n, err
	}
	if !r.c.flush() {
		return nil, 0, errWriteFailed
	}
	if r.readFD == nil {
		r.readFD = r.tryRead // one closure per connection, not one per read
	}
	for {
		r.noWait = atCommand && r.c.finishing()
		// A RawConn.Read whose deadline has passed fails before it calls tryRead: a count left
		// from the read before would then pass for input that is not in any buffer.
		r.n, r.rerr = 0, nil
		err := r.rc.Read(r.readFD)
		bufp, n, rerr := r.bufp, r.n, r.rerr
		r.bufp, r.rerr = nil, nil
		switch {
		case err != nil:
			// The wait failed: a deadline (stopAfterCommand) or a closed socket. tryRead holds
			// no buffer then.
			if r.c.stopWoke(err) {
				continue
			}
			return nil, 0, err
		case rerr == syscall.EAGAIN:
			return nil, 0, errStopped // noWait, and nothing has arrived
		case rerr != nil:
			return bufp, 0, rerr
		case n <= 0:
			return bufp, 0, io.EOF
		}
		return bufp, n, nil
	}
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
		return r.noWait
	}
	return true
}

var (
	_ io.Reader    = (*rawReader)(nil)
	_ pooledSource = (*rawReader)(nil)
)
