package gateway

import "slices"

// The connection's tube bookkeeping: the used tube and the watch list live here; the backend
// is told of every change so that it can count references across gateways.

func (c *conn) cmdUse(args []byte) bool {
	if !validName(args) {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdUse)
	name := string(args)
	if name != c.use {
		if !c.sessionOrError() {
			return true
		}
		ctx, cancel := c.callContext()
		defer cancel()
		if err := c.store.UseTube(ctx, c.sid, name); err != nil {
			c.replyError("use", err)
			return true
		}
		c.use = name
	}
	c.reply(append(append([]byte(wordUsing), name...), "\r\n"...))
	return true
}

func (c *conn) cmdWatch(args []byte) bool {
	if !validName(args) {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdWatch)
	name := string(args)
	if !slices.Contains(c.watch, name) {
		if !c.sessionOrError() {
			return true
		}
		ctx, cancel := c.callContext()
		defer cancel()
		if err := c.store.WatchTube(ctx, c.sid, name); err != nil {
			c.replyError("watch", err)
			return true
		}
		c.watch = append(c.watch, name)
	}
	c.out = appendNumberReply(c.out, wordWatching, uint64(len(c.watch)))
	return true
}

func (c *conn) cmdIgnore(args []byte) bool {
	if !validName(args) {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdIgnore)
	i := slices.Index(c.watch, string(args))
	if i >= 0 {
		if len(c.watch) == 1 {
			c.reply(msgNotIgnored)
			return true
		}
		if !c.sessionOrError() {
			return true
		}
		ctx, cancel := c.callContext()
		defer cancel()
		if err := c.store.IgnoreTube(ctx, c.sid, c.watch[i]); err != nil {
			c.replyError("ignore", err)
			return true
		}
		// beanstalkd removes from its arrays by moving the last entry into the gap.
		last := len(c.watch) - 1
		c.watch[i] = c.watch[last]
		c.watch = c.watch[:last]
	}
	c.out = appendNumberReply(c.out, wordWatching, uint64(len(c.watch)))
	return true
}

func (c *conn) cmdListTubeUsed(_ []byte) bool {
	c.count(cmdListTubeUsed)
	c.reply(append(append([]byte(wordUsing), c.use...), "\r\n"...))
	return true
}

func (c *conn) cmdListTubesWatched(_ []byte) bool {
	c.count(cmdListTubesWatched)
	c.out = appendDataReply(c.out, yamlList(c.watch))
	return true
}

func (c *conn) cmdListTubes(_ []byte) bool {
	c.count(cmdListTubes)
	ctx, cancel := c.callContext()
	defer cancel()
	names, err := c.store.ListTubes(ctx)
	if err != nil {
		c.replyError("list-tubes", err)
		return true
	}
	c.out = appendDataReply(c.out, yamlList(c.visibleTubes(names)))
	return true
}

func (c *conn) cmdStatsTube(args []byte) bool {
	if !validName(args) {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdStatsTube)
	ctx, cancel := c.callContext()
	defer cancel()
	ts, err := c.store.TubeStats(ctx, string(args))
	if err != nil {
		c.replyError("stats-tube", err)
		return true
	}
	c.out = appendDataReply(c.out, tubeStatsYAML(ts, c.ctr.tubeWaiting(ts.Name), c.srv.v112))
	return true
}

func (c *conn) cmdStatsJob(args []byte) bool {
	id, ok := lastID(args)
	if !ok {
		c.reply(msgBadFormat)
		return true
	}
	c.count(cmdStatsJob)
	ctx, cancel := c.callContext()
	defer cancel()
	js, err := c.store.JobStats(ctx, id)
	if err != nil {
		c.replyError("stats-job", err)
		return true
	}
	c.out = appendDataReply(c.out, jobStatsYAML(js, c.srv.v112))
	return true
}

func (c *conn) cmdStats(_ []byte) bool {
	c.count(cmdStats)
	ctx, cancel := c.callContext()
	defer cancel()
	q, err := c.store.Stats(ctx)
	if err != nil {
		c.replyError("stats", err)
		return true
	}
	c.out = appendDataReply(c.out, c.srv.statsYAML(q, c.ctr))
	return true
}
