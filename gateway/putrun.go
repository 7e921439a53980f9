package gateway

import (
	"bytes"
	"time"

	"github.com/beangate/beangate/backend"
)

var crlfBytes = []byte("\r\n")

// maxPutRun bounds the puts answered together (see putRun).
const maxPutRun = 64

// putRun stores p together with the puts that follow it whole in the read buffer, in one
// Backend.PutBatch, and answers each in order. A producer that pipelines its puts then waits for
// one store commit per run instead of one per put: with a durable store, where a commit waits
// for a disk flush, that is what lets one connection put faster than one job per flush. Only
// puts that would be stored join a run; anything else (another command, a put with a bad
// argument or a body not yet received) waits for the command loop, after the run's replies.
func (c *conn) putRun(p backend.PutParams) {
	ps := []backend.PutParams{p}
	for len(ps) < maxPutRun && !c.srv.Draining() {
		next, ok := c.nextBufferedPut()
		if !ok {
			break
		}
		ps = append(ps, next)
	}
	ctx, cancel := c.callContext()
	defer cancel()
	if len(ps) == 1 {
		id, err := c.store.Put(ctx, p)
		c.answerPut(id, err)
		return
	}
	results := c.store.PutBatch(ctx, ps)
	var first Result
	for i, r := range results {
		c.res = ResultOK
		c.answerPut(r.ID, r.Err)
		switch {
		case i == 0:
			first = c.res
		case c.srv.obs != nil:
			c.srv.obs.CommandDone(c.cmdID, c.res, time.Since(c.cmdStart))
		}
	}
	c.res = first // executeObserved reports the run's first put
}

// nextBufferedPut takes the next command from the read buffer if it is a put that would be
// stored (see cmdPut) and its body has arrived whole.
func (c *conn) nextBufferedPut() (backend.PutParams, bool) {
	buf := c.in.Peek()
	end := bytes.Index(buf, crlfBytes)
	if end < 0 || end+2 > MaxLineLength {
		return backend.PutParams{}, false
	}
	line := buf[:end]
	args, isPut := bytes.CutPrefix(line, []byte("put "))
	if !isPut || bytes.IndexByte(line, 0) >= 0 {
		return backend.PutParams{}, false
	}
	pri, rest, ok1 := readU32(args)
	delay, rest, ok2 := readU32(rest)
	ttr, rest, ok3 := readU32(rest)
	size, rest, ok4 := readU32(rest)
	bodyAt := end + 2
	if !(ok1 && ok2 && ok3 && ok4) || len(rest) > 0 || size > c.srv.cfg.MaxJobSize ||
		uint64(bodyAt)+uint64(size)+2 > uint64(len(buf)) ||
		!bytes.Equal(buf[bodyAt+int(size):bodyAt+int(size)+2], crlfBytes) {
		return backend.PutParams{}, false
	}
	if c.acl != nil && !c.admitPut(int(size), true) {
		return backend.PutParams{}, false // refused by the command loop, in its turn
	}
	if c.srv.log.Enabled(c.ctx, levelTrace) {
		c.trace(line)
	}
	body := make([]byte, size)
	copy(body, buf[bodyAt:])
	c.in.Skip(bodyAt + int(size) + 2)
	c.count(cmdPut)
	if ttr == 0 {
		ttr = 1
	}
	return backend.PutParams{
		Session: c.sid, Tube: c.use, Priority: pri, Delay: seconds(delay), TTR: seconds(ttr), Body: body,
	}, true
}
