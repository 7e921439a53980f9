package gateway

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/beangate/beangate/backend"
)

// command is one entry of the verb table.
type command struct {
	prefix string
	// exact: the whole line must be the prefix (reserve, stats, peek-ready, …); anything more
	// is BAD_FORMAT, as beanstalkd's prefix matching makes it.
	exact bool
	run   func(c *conn, args []byte) (keepOpen bool)
	name  string // for metrics: the prefix without its space
}

// commands is beanstalkd's verb table, in its matching order (docs/protocol.md §1.4): a line is
// recognised by the first prefix it starts with, so "reserve-job" alone falls back to
// "reserve" and gets BAD_FORMAT, and "put" without its space is UNKNOWN_COMMAND.
var commands []command

func init() { // a table that refers to methods of conn cannot be a plain initialised var
	commands = []command{
		{"put ", false, (*conn).cmdPut, ""},
		{"peek ", false, (*conn).cmdPeek, ""},
		{"peek-ready", true, peekState(cmdPeekReady, backend.Ready), ""},
		{"peek-delayed", true, peekState(cmdPeekDelayed, backend.Delayed), ""},
		{"peek-buried", true, peekState(cmdPeekBuried, backend.Buried), ""},
		{"reserve-with-timeout ", false, (*conn).cmdReserveWithTimeout, ""},
		{"reserve-job ", false, (*conn).cmdReserveJob, ""},
		{"reserve", true, (*conn).cmdReserve, ""},
		{"delete ", false, (*conn).cmdDelete, ""},
		{"release ", false, (*conn).cmdRelease, ""},
		{"bury ", false, (*conn).cmdBury, ""},
		{"kick ", false, (*conn).cmdKick, ""},
		{"kick-job ", false, (*conn).cmdKickJob, ""},
		{"touch ", false, (*conn).cmdTouch, ""},
		{"stats-job ", false, (*conn).cmdStatsJob, ""},
		{"stats-tube ", false, (*conn).cmdStatsTube, ""},
		{"stats", true, (*conn).cmdStats, ""},
		{"use ", false, (*conn).cmdUse, ""},
		{"watch ", false, (*conn).cmdWatch, ""},
		{"ignore ", false, (*conn).cmdIgnore, ""},
		{"list-tubes-watched", true, (*conn).cmdListTubesWatched, ""},
		{"list-tube-used", true, (*conn).cmdListTubeUsed, ""},
		{"list-tubes", true, (*conn).cmdListTubes, ""},
		{"quit", false, func(*conn, []byte) bool { return false }, ""},
		{"pause-tube", false, (*conn).cmdPauseTube, ""},
	}
	for i := range commands {
		commands[i].name = strings.TrimSpace(commands[i].prefix)
	}
	commandAuth = CommandID(len(commands))
	commandUnknown = commandAuth + 1
	bindGuards()
}

// execute runs one command line, reporting whether the connection stays open.
func (c *conn) execute(line []byte) bool {
	if bytes.IndexByte(line, 0) >= 0 {
		c.reply(msgBadFormat)
		return true
	}
	if c.acl != nil && bytes.HasPrefix(line, []byte("auth ")) {
		return c.reauthenticate(line)
	}
	for i := range commands {
		cmd := &commands[i]
		if !bytes.HasPrefix(line, []byte(cmd.prefix)) {
			continue
		}
		c.cmdID = CommandID(i)
		args := line[len(cmd.prefix):]
		if cmd.exact && len(args) > 0 {
			c.reply(msgBadFormat)
			return true
		}
		if c.acl != nil {
			if v := c.checkGrant(i, args); v != allowed {
				return v == refused
			}
		}
		return cmd.run(c, args)
	}
	c.cmdID = commandUnknown
	c.reply(msgUnknownCommand)
	return true
}

func (c *conn) count(k cmd) { c.ctr.count(k) }

func (c *conn) markProducer() {
	if !c.producer {
		c.producer = true
		c.ctr.producers.Add(1)
	}
}

func (c *conn) markWorker() {
	if !c.worker {
		c.worker = true
		c.ctr.workers.Add(1)
	}
}

func seconds(n uint32) time.Duration { return time.Duration(n) * time.Second }

// cmdPut follows beanstalkd's order exactly (docs/protocol.md §2.1): a bad number is BAD_FORMAT
// with the body left unread; an oversized body is read and thrown away before JOB_TOO_BIG, and
// that check comes before the one for trailing garbage.
func (c *conn) cmdPut(args []byte) bool {
	pri, rest, ok1 := readU32(args)
	delay, rest, ok2 := readU32(rest)
	ttr, rest, ok3 := readU32(rest)
	size, rest, ok4 := readU32(rest)
	if !(ok1 && ok2 && ok3 && ok4) {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdPut)
	if size > c.srv.cfg.MaxJobSize {
		if err := c.in.Discard(int64(size) + 2); err != nil {
			return false
		}
		c.reply(msgJobTooBig)
		return true
	}
	if len(rest) > 0 {
		c.reply(msgBadFormat)
		return true
	}
	c.markProducer()
	if ttr == 0 {
		ttr = 1
	}
	body, crlf, err := c.in.ReadBody(int(size))
	if err != nil {
		return false
	}
	switch {
	case !crlf:
		c.reply(msgExpectedCRLF)
		return true
	case c.srv.Draining():
		c.reply(msgDraining)
		return true
	case c.acl != nil && !c.admitPut(len(body), false):
		return true
	}
	p := backend.PutParams{
		Session: c.sid, Tube: c.use, Priority: pri, Delay: seconds(delay), TTR: seconds(ttr), Body: body,
	}
	if c.in.Buffered() > 0 {
		c.putRun(p)
		return true
	}
	ctx, cancel := c.callContext()
	defer cancel()
	id, err := c.store.Put(ctx, p)
	c.answerPut(id, err)
	return true
}

func (c *conn) answerPut(id uint64, err error) {
	if err != nil {
		c.replyError("put", err)
		return
	}
	c.out = appendNumberReply(c.out, wordInserted, id)
}

func (c *conn) cmdReserve(_ []byte) bool {
	c.count(cmdReserve)
	return c.reserve(-1)
}

func (c *conn) cmdReserveWithTimeout(args []byte) bool {
	if c.srv.v112 {
		timeout, ok := readReserveTimeout112(args)
		if !ok {
			c.reply(msgBadFormat)
			return true
		}
		c.count(cmdReserveWithTimeout)
		return c.reserve(timeout)
	}
	secs, ok := readReserveTimeout(args)
	if !ok {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdReserveWithTimeout)
	return c.reserve(seconds(secs))
}

func (c *conn) cmdReserveJob(args []byte) bool {
	id, ok := lastID(args)
	if !ok {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdReserveJob)
	if !c.sessionOrError() {
		return true
	}
	ctx, cancel := c.callContext()
	defer cancel()
	job, err := c.store.ReserveJob(ctx, c.sid, id)
	if err != nil {
		c.replyError("reserve-job", err)
		return true
	}
	c.markWorker()
	c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
	c.holdsJob(job)
	if c.srv.obs != nil {
		c.hold(job, time.Now())
	}
	return true
}

// jobCommand parses "<id>" and runs op with the session, for delete and touch.
func (c *conn) jobCommand(args []byte, k cmd, name string, ok []byte,
	op func(backend.Backend, context.Context, backend.SessionID, uint64) error) bool {
	id, valid := lastID(args)
	if !valid {
		c.reply(msgBadFormat)
		return true
	}
	c.count(k)
	if !c.sessionOrError() {
		return true
	}
	ctx, cancel := c.callContext()
	defer cancel()
	if err := op(c.store, ctx, c.sid, id); err != nil {
		c.replyError(name, err)
		return true
	}
	if k == cmdDelete {
		c.dropsJob(id)
		if c.srv.obs != nil {
			c.unhold(id, true)
		}
	}
	c.reply(ok)
	return true
}

func (c *conn) cmdDelete(args []byte) bool {
	return c.jobCommand(args, cmdDelete, "delete", msgDeleted, backend.Backend.Delete)
}

func (c *conn) cmdTouch(args []byte) bool {
	return c.jobCommand(args, cmdTouch, "touch", msgTouched, backend.Backend.Touch)
}

func (c *conn) cmdRelease(args []byte) bool {
	id, rest, ok1 := readUint(args, maxID)
	pri, rest, ok2 := readU32(rest)
	delay, ok3 := lastU32(rest)
	if !(ok1 && ok2 && ok3) {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdRelease)
	if !c.sessionOrError() {
		return true
	}
	ctx, cancel := c.callContext()
	defer cancel()
	err := c.store.Release(ctx, backend.ReleaseParams{Session: c.sid, ID: id, Priority: pri, Delay: seconds(delay)})
	reply := msgReleased
	if errors.Is(err, backend.ErrBuried) {
		// The tube's max-reserves buried it: beanstalkd's answer for a release it could not
		// requeue.
		err, reply = nil, msgBuried
	}
	if err != nil {
		c.replyError("release", err)
		return true
	}
	c.dropsJob(id)
	if c.srv.obs != nil {
		c.unhold(id, false)
	}
	c.reply(reply)
	return true
}

func (c *conn) cmdBury(args []byte) bool {
	id, rest, ok1 := readUint(args, maxID)
	pri, ok2 := lastU32(rest)
	if !(ok1 && ok2) {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdBury)
	if !c.sessionOrError() {
		return true
	}
	ctx, cancel := c.callContext()
	defer cancel()
	if err := c.store.Bury(ctx, c.sid, id, pri); err != nil {
		c.replyError("bury", err)
		return true
	}
	c.dropsJob(id)
	if c.srv.obs != nil {
		c.unhold(id, false)
	}
	c.reply(msgBuried)
	return true
}

func (c *conn) cmdKick(args []byte) bool {
	bound, ok := readKickBound(args)
	if !ok {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdKick)
	ctx, cancel := c.callContext()
	defer cancel()
	n, err := c.store.Kick(ctx, c.use, uint64(bound))
	if err != nil {
		c.replyError("kick", err)
		return true
	}
	c.out = appendNumberReply(c.out, wordKicked, n)
	return true
}

func (c *conn) cmdKickJob(args []byte) bool {
	id, ok := lastID(args)
	if !ok {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdKickJob)
	ctx, cancel := c.callContext()
	defer cancel()
	if err := c.store.KickJob(ctx, id); err != nil {
		c.replyError("kick-job", err)
		return true
	}
	c.reply(msgKickedJob)
	return true
}

func (c *conn) cmdPeek(args []byte) bool {
	id, ok := lastID(args)
	if !ok {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdPeek)
	ctx, cancel := c.callContext()
	defer cancel()
	job, err := c.store.Peek(ctx, id)
	if err != nil {
		c.replyError("peek", err)
		return true
	}
	c.out = appendJobReply(c.out, wordFound, job.ID, job.Body)
	return true
}

func peekState(k cmd, state backend.State) func(*conn, []byte) bool {
	return func(c *conn, _ []byte) bool {
		c.count(k)
		ctx, cancel := c.callContext()
		defer cancel()
		job, err := c.store.PeekState(ctx, c.use, state)
		if err != nil {
			c.replyError("peek-"+state.String(), err)
			return true
		}
		c.out = appendJobReply(c.out, wordFound, job.ID, job.Body)
		return true
	}
}

// cmdPauseTube parses as beanstalkd does (docs/protocol.md §2.25): the name is the longest run of
// name bytes after any spaces, the delay must end the line; the command counts before the name
// is validated.
func (c *conn) cmdPauseTube(args []byte) bool {
	name, rest := nameRun(bytes.TrimLeft(args, " "))
	delay, ok := lastU32(rest)
	if !ok {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdPauseTube)
	if !validName(name) {
		c.reply(msgBadFormat)
		return true
	}
	ctx, cancel := c.callContext()
	defer cancel()
	if err := c.store.PauseTube(ctx, string(name), seconds(delay)); err != nil {
		c.replyError("pause-tube", err)
		return true
	}
	c.reply(msgPaused)
	return true
}

// sessionOrError makes sure the backend knows the session, answering INTERNAL_ERROR if it
// cannot be registered.
func (c *conn) sessionOrError() bool {
	if err := c.ensureSession(); err != nil {
		c.reply(msgInternalError)
		return false
	}
	return true
}

const maxID = 1<<64 - 1
