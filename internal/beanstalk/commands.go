package beanstalk

import (
	"fmt"
	"strconv"
)

// The one-command methods send their command, flush and read its reply. Their errors name the
// command ("delete: not found"); the protocol's error replies stay errors.Is-able.

// Auth sends beangate's `auth <token>` (a server started with --auth-token-file).
func (c *Conn) Auth(token string) error { return c.call("auth", "AUTHENTICATED", "auth "+token) }

// Use selects the tube puts go to and peek-ready, peek-delayed and peek-buried look in.
func (c *Conn) Use(tube string) error { return c.call("use", "USING", "use "+tube) }

// WatchOnly makes the watch list exactly tubes: it watches them and ignores default (which it
// must therefore not be told to watch).
func (c *Conn) WatchOnly(tubes ...string) error {
	for _, t := range tubes {
		c.Send("watch " + t)
	}
	c.Send("ignore default")
	if err := c.Flush(); err != nil {
		return err
	}
	for range tubes {
		if err := c.Expect("WATCHING"); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
	}
	n, err := c.ReadUint("WATCHING")
	if err != nil {
		return fmt.Errorf("ignore: %w", err)
	}
	if n != uint64(len(tubes)) {
		return fmt.Errorf("watching %d tubes, want %d", n, len(tubes))
	}
	return nil
}

// Put puts a job into the used tube and returns its id; delay and ttr are in seconds.
func (c *Conn) Put(pri, delay, ttr uint32, body []byte) (uint64, error) {
	c.SendPut(pri, delay, ttr, body)
	return c.callUint("put", "INSERTED")
}

// Delete deletes a job.
func (c *Conn) Delete(id uint64) error {
	return c.call("delete", "DELETED", "delete "+strconv.FormatUint(id, 10))
}

// Peek returns the body of a job; it is valid until the next read.
func (c *Conn) Peek(id uint64) ([]byte, error) {
	_, body, err := c.callJob("peek", "peek "+strconv.FormatUint(id, 10))
	return body, err
}

// PeekState peeks at the next job of the used tube in state "ready", "delayed" or "buried":
// its id and body, valid until the next read.
func (c *Conn) PeekState(state string) (uint64, []byte, error) {
	return c.callJob("peek-"+state, "peek-"+state)
}

// Kick kicks up to bound buried jobs of the used tube, else delayed ones, and returns how many.
func (c *Conn) Kick(bound uint64) (uint64, error) {
	c.Send("kick " + strconv.FormatUint(bound, 10))
	return c.callUint("kick", "KICKED")
}

// KickJob kicks one buried or delayed job.
func (c *Conn) KickJob(id uint64) error {
	return c.call("kick-job", "KICKED", "kick-job "+strconv.FormatUint(id, 10))
}

// PauseTube pauses reserves from tube for seconds (0 unpauses).
func (c *Conn) PauseTube(tube string, seconds uint64) error {
	return c.call("pause-tube", "PAUSED", "pause-tube "+tube+" "+strconv.FormatUint(seconds, 10))
}

// Stats is the server's stats.
func (c *Conn) Stats() (Stats, error) { return c.callStats("stats", "stats") }

// StatsTube is a tube's stats.
func (c *Conn) StatsTube(tube string) (Stats, error) {
	return c.callStats("stats-tube", "stats-tube "+tube)
}

// StatsJob is a job's stats.
func (c *Conn) StatsJob(id uint64) (Stats, error) {
	return c.callStats("stats-job", "stats-job "+strconv.FormatUint(id, 10))
}

// ListTubes names every tube.
func (c *Conn) ListTubes() ([]string, error) {
	c.Send("list-tubes")
	data, err := c.callData("list-tubes")
	if err != nil {
		return nil, err
	}
	return ParseList(data), nil
}

// call sends line and expects a reply of want.
func (c *Conn) call(op, want, line string) error {
	c.Send(line)
	_, err := exchange(c, op, func() (struct{}, error) { return struct{}{}, c.Expect(want) })
	return err
}

// callUint flushes what is queued and reads a reply of want and a number.
func (c *Conn) callUint(op, want string) (uint64, error) {
	return exchange(c, op, func() (uint64, error) { return c.ReadUint(want) })
}

// callJob sends line and reads a FOUND reply.
func (c *Conn) callJob(op, line string) (uint64, []byte, error) {
	type job struct {
		id   uint64
		body []byte
	}
	c.Send(line)
	j, err := exchange(c, op, func() (job, error) {
		id, body, err := c.ReadJob("FOUND")
		return job{id, body}, err
	})
	return j.id, j.body, err
}

// callData flushes what is queued and reads an OK reply's data.
func (c *Conn) callData(op string) ([]byte, error) { return exchange(c, op, c.ReadData) }

func (c *Conn) callStats(op, line string) (Stats, error) {
	c.Send(line)
	data, err := c.callData(op)
	if err != nil {
		return nil, err
	}
	return ParseStats(data), nil
}

// exchange flushes what is queued and reads the reply with read; an error names op.
func exchange[T any](c *Conn, op string, read func() (T, error)) (T, error) {
	err := c.Flush()
	var v T
	if err == nil {
		v, err = read()
	}
	if err != nil {
		return v, fmt.Errorf("%s: %w", op, err)
	}
	return v, nil
}
