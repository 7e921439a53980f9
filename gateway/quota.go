package gateway

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// A tenant's quotas (docs/security.md), as this gateway enforces them:
//
//   - max_jobs counts the jobs kept in the tenant's store (ready, delayed, buried, reserved),
//     fleet-wide: the store's figure, read at most every quotaRefresh, plus the puts this
//     gateway has accepted since. Other gateways' puts within one refresh are not seen, so a
//     fleet of n gateways may overshoot by what the others put in quotaRefresh.
//   - max_bytes is an estimate: the jobs kept times the mean body size of the tenant's puts
//     through this gateway. No store keeps its bodies' total, and counting it on every put and
//     delete would cost each job a store write.
//   - put_rate is per gateway: a token bucket of put_rate puts a second, with a burst of as
//     many (at least one).
//
// A put past a quota answers OUT_OF_MEMORY, beanstalkd's reply for a full server, which clients
// already handle as "try later".

type quotaKind int

const (
	quotaJobs quotaKind = iota
	quotaBytes
	quotaRate
	numQuotas
)

var quotaNames = [numQuotas]string{"max_jobs", "max_bytes", "put_rate"}

// quotaRefresh is how old the store's kept-jobs figure may get.
const quotaRefresh = 250 * time.Millisecond

type quota struct {
	on atomic.Bool // any limit set: without one, a put costs one atomic load

	mu       sync.Mutex
	tenant   string
	log      *slog.Logger
	maxJobs  uint64
	maxBytes uint64
	rate     float64
	tokens   float64
	filled   time.Time // when tokens was last topped up
	kept     uint64    // jobs kept: the store's figure at readAt plus the puts accepted since
	readAt   time.Time // zero: never read
	reading  bool
	putJobs  uint64 // the tenant's puts through this gateway and their bytes, for the mean size
	putBytes uint64
	over     [numQuotas]bool // the last put refused for this quota; logged once per crossing

	refused [numQuotas]atomic.Uint64
}

func (q *quota) setLimits(t *Tenant, log *slog.Logger) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.tenant, q.log = t.Name, log
	if t.PutRate != q.rate {
		q.tokens, q.filled = max(t.PutRate, 1), time.Time{}
	}
	q.maxJobs, q.maxBytes, q.rate = t.MaxJobs, t.MaxBytes, t.PutRate
	q.on.Store(t.MaxJobs > 0 || t.MaxBytes > 0 || t.PutRate > 0)
}

func (q *quota) refusals() map[string]uint64 {
	m := make(map[string]uint64, numQuotas)
	for k := range numQuotas {
		m[quotaNames[k]] = q.refused[k].Load()
	}
	return m
}

// admitPut decides whether the connection's tenant takes one more job of size bytes; if not it
// answers OUT_OF_MEMORY, counts the refusal and logs a crossing. quiet only decides: a put of a
// pipelined run that would be refused is left for the command loop to refuse.
func (c *conn) admitPut(size int, quiet bool) bool {
	q := &c.acl.tenant.quota
	if !q.on.Load() {
		return true
	}
	c.readKept(q)
	kind, ok := q.admit(uint64(size), time.Now(), quiet)
	if ok || quiet {
		return ok
	}
	q.refused[kind].Add(1)
	c.reply(msgOutOfMemory)
	return false
}

// readKept refreshes the kept-jobs figure from the store when it is older than quotaRefresh,
// one connection at a time; the first read is waited for, later ones only by their reader. A
// failed read keeps the old figure (the put itself will meet the store's failure).
func (c *conn) readKept(q *quota) {
	q.mu.Lock()
	if (!q.readAt.IsZero() && time.Since(q.readAt) < quotaRefresh) || q.reading || q.maxJobs == 0 && q.maxBytes == 0 {
		q.mu.Unlock()
		return
	}
	q.reading = true
	q.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, c.srv.cfg.BackendTimeout)
	st, err := c.store.Stats(ctx)
	cancel()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reading = false
	q.readAt = time.Now()
	if err == nil {
		q.kept = st.ReadyJobs + st.DelayedJobs + st.BuriedJobs + st.ReservedJobs
	}
}

// admit takes one put of size bytes if no quota refuses it, reporting the first that does.
func (q *quota) admit(size uint64, now time.Time, quiet bool) (quotaKind, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.maxJobs > 0 && q.kept+1 > q.maxJobs {
		return q.refuse(quotaJobs, quiet, q.maxJobs)
	}
	if q.maxBytes > 0 {
		mean := size
		if q.putJobs > 0 {
			mean = q.putBytes / q.putJobs
		}
		if q.kept*mean+size > q.maxBytes {
			return q.refuse(quotaBytes, quiet, q.maxBytes)
		}
	}
	if q.rate > 0 {
		burst := max(q.rate, 1)
		if !q.filled.IsZero() {
			q.tokens = min(burst, q.tokens+now.Sub(q.filled).Seconds()*q.rate)
		}
		q.filled = now
		if q.tokens < 1 {
			return q.refuse(quotaRate, quiet, uint64(q.rate))
		}
		q.tokens--
	}
	q.kept++
	q.putJobs++
	q.putBytes += size
	for k := range numQuotas {
		if q.over[k] {
			q.over[k] = false
			q.log.Info("tenant back under its quota: puts accepted again", "tenant", q.tenant, "quota", quotaNames[k])
		}
	}
	return 0, true
}

func (q *quota) refuse(k quotaKind, quiet bool, limit uint64) (quotaKind, bool) {
	if !quiet && !q.over[k] {
		q.over[k] = true
		q.log.Info("tenant quota reached: puts answer OUT_OF_MEMORY", "tenant", q.tenant, "quota", quotaNames[k], "limit", limit)
	}
	return k, false
}
