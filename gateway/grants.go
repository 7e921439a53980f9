package gateway

import (
	"bytes"
	"errors"
	"log/slog"

	"github.com/beangate/beangate/backend"
)

// The one place where a command meets its connection's grants (Config.Access): every verb is
// mapped here to the grant it needs and the tube it needs it on. A refused command answers
// UNAUTHORIZED — the line token auth already uses — and the connection stays open; a command
// naming a job in a tube where the principal holds no grant at all answers NOT_FOUND instead, as
// for a job that does not exist, so that ids cannot be probed for other teams' jobs
// (docs/security.md says why both).

// verdict is a guard's decision.
type verdict uint8

const (
	allowed verdict = iota
	refused         // answered already
	closed          // the connection must close (a refused put's body could not be read)
)

// guard checks one command line's arguments against the connection's grants. A line it cannot
// parse is allowed: the command answers BAD_FORMAT as it would anyway.
type guard func(c *conn, args []byte) verdict

// guards maps the verbs to their checks. Those without one need no grant: stats (the tenant's
// own), ignore, list-tube-used, list-tubes-watched, quit; list-tubes shows only the tubes the
// principal holds a grant on (visibleTubes). use and watch are answered as always: clients
// pipeline them before the put or reserve they serve and take any reply that is not USING or
// WATCHING as the next command's (go-beanstalk does), so refusing them would put the client out
// of step; the put, or the reserve, is refused instead.
var guards = map[string]guard{
	"put":                  guardPut,
	"peek":                 jobTube(GrantInspect),
	"peek-ready":           usedTube(GrantInspect),
	"peek-delayed":         usedTube(GrantInspect),
	"peek-buried":          usedTube(GrantInspect),
	"stats-job":            jobTube(GrantInspect),
	"stats-tube":           namedTube(GrantInspect),
	"reserve":              guardReserve,
	"reserve-with-timeout": guardReserve,
	"reserve-job":          jobTube(GrantReserve),
	"delete":               guardDelete,
	"release":              reservedJob,
	"bury":                 reservedJob,
	"touch":                reservedJob,
	"kick":                 usedTube(GrantManage),
	"kick-job":             jobTube(GrantManage),
	"pause-tube":           guardPauseTube,
}

// commandGuards is guards by the verb table's index (bindGuards).
var commandGuards []guard

func bindGuards() {
	commandGuards = make([]guard, len(commands))
	for i := range commands {
		commandGuards[i] = guards[commands[i].name]
	}
}

// checkGrant runs command i's guard, after looking the principal up again if the Access has
// been replaced since the last command.
func (c *conn) checkGrant(i int, args []byte) verdict {
	c.acl.refresh(c.srv.access.Load())
	if g := commandGuards[i]; g != nil {
		return g(c, args)
	}
	return allowed
}

// permit allows the command if the principal holds any of need on tube; else it refuses it,
// with NOT_FOUND when hide is set and the principal holds nothing there.
func (c *conn) permit(tube string, need Grant, hide bool) verdict {
	held := c.acl.p.on(tube)
	if held&need != 0 {
		return allowed
	}
	c.acl.tenant.refusedByGrant.Add(1)
	if c.srv.log.Enabled(c.ctx, slog.LevelDebug) {
		c.logRefusal(tube, need)
	}
	if hide && held == 0 {
		c.reply(msgNotFound)
	} else {
		c.reply(msgUnauthorized)
	}
	return refused
}

//go:noinline
func (c *conn) logRefusal(tube string, need Grant) {
	c.srv.log.Debug("command refused by grant", "principal", c.acl.p.name, "tenant", c.acl.tenant.name,
		"command", CommandNames()[c.cmdID], "tube", tube, "needs", need.String(), "session", c.sid)
}

func namedTube(need Grant) guard {
	return func(c *conn, args []byte) verdict {
		if !validName(args) {
			return allowed
		}
		return c.permit(string(args), need, false)
	}
}

func usedTube(need Grant) guard {
	return func(c *conn, _ []byte) verdict { return c.permit(c.use, need, false) }
}

// guardPut checks the used tube once put's arguments are known good; a refused put's body is
// read and dropped, as JOB_TOO_BIG's is.
func guardPut(c *conn, args []byte) verdict {
	_, rest, ok1 := readU32(args)
	_, rest, ok2 := readU32(rest)
	_, rest, ok3 := readU32(rest)
	size, rest, ok4 := readU32(rest)
	if !(ok1 && ok2 && ok3 && ok4) || size > c.srv.cfg.MaxJobSize || len(rest) > 0 {
		return allowed
	}
	if c.acl.p.on(c.use)&GrantPut != 0 {
		return allowed
	}
	if err := c.in.Discard(int64(size) + 2); err != nil {
		return closed
	}
	return c.permit(c.use, GrantPut, false)
}

// guardReserve needs the reserve grant on one watched tube at least; the reserve then takes
// jobs only from those (reserveTubes).
func guardReserve(c *conn, _ []byte) verdict {
	for _, t := range c.watch {
		if c.acl.p.on(t)&GrantReserve != 0 {
			return allowed
		}
	}
	return c.permit(c.watch[0], GrantReserve, false)
}

// reserveTubes are the watched tubes a reserve takes jobs from: under Config.Access, those the
// principal may reserve from now.
func (c *conn) reserveTubes() []string {
	if c.acl == nil {
		return c.watch
	}
	tubes := make([]string, 0, len(c.watch))
	for _, t := range c.watch {
		if c.acl.p.on(t)&GrantReserve != 0 {
			tubes = append(tubes, t)
		}
	}
	return tubes
}

// jobTube checks need on the tube of the job the line names.
func jobTube(need Grant) guard {
	return func(c *conn, args []byte) verdict {
		id, ok := lastID(args)
		if !ok {
			return allowed
		}
		return c.permitJob(id, need)
	}
}

// permitJob looks up the job's tube in the store and checks need there; a job that does not
// exist is left to the command, which answers NOT_FOUND.
func (c *conn) permitJob(id uint64, need Grant) verdict {
	ctx, cancel := c.callContext()
	js, err := c.store.JobStats(ctx, id)
	cancel()
	switch {
	case errors.Is(err, backend.ErrNotFound):
		return allowed
	case err != nil:
		c.replyError("stats-job", err)
		return refused
	}
	return c.permit(js.Tube, need, true)
}

// guardDelete: a job this connection reserved needs the reserve grant on its tube, any other
// job manage.
func guardDelete(c *conn, args []byte) verdict {
	id, ok := lastID(args)
	if !ok {
		return allowed
	}
	if tube, mine := c.acl.mine[id]; mine {
		return c.permit(tube, GrantReserve, true)
	}
	return c.permitJob(id, GrantManage)
}

// reservedJob guards release, bury and touch, which only act on the connection's own
// reservations: those need the reserve grant on their tube; any other id is left to the store,
// which answers NOT_FOUND.
func reservedJob(c *conn, args []byte) verdict {
	id, _, ok := readUint(args, maxID)
	if !ok {
		return allowed
	}
	if tube, mine := c.acl.mine[id]; mine {
		return c.permit(tube, GrantReserve, true)
	}
	return allowed
}

func guardPauseTube(c *conn, args []byte) verdict {
	name, _ := nameRun(bytes.TrimLeft(args, " "))
	if !validName(name) {
		return allowed
	}
	return c.permit(string(name), GrantManage, false)
}

// visibleTubes keeps the tubes the principal holds a grant on (list-tubes).
func (c *conn) visibleTubes(names []string) []string {
	if c.acl == nil {
		return names
	}
	kept := names[:0]
	for _, n := range names {
		if c.acl.p.on(n) != 0 {
			kept = append(kept, n)
		}
	}
	return kept
}

// holdsJob and dropsJob keep connAccess.mine: the jobs this connection reserved.
func (c *conn) holdsJob(job *backend.Job) {
	if c.acl != nil && len(c.acl.mine) < maxMine {
		c.acl.mine[job.ID] = job.Tube
	}
}

func (c *conn) dropsJob(id uint64) {
	if c.acl != nil {
		delete(c.acl.mine, id)
	}
}
