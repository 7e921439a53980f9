package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// The ledger is the exactly-once checker: it records every job id the server INSERTED, reserved
// and deleted during a round, and fails on the first double delivery. Ids are sharded so many
// connections can record without contending on one lock.

const ledgerShards = 64

type jobMark struct {
	inserted bool
	reserves uint32
	deletes  uint32
}

type ledgerShard struct {
	mu   sync.Mutex
	jobs map[uint64]*jobMark
}

type ledger struct {
	shards   [ledgerShards]ledgerShard
	inserted atomic.Int64
	deleted  atomic.Int64
}

// doubleDeliveryError means one job id was handed out twice (the check the harness exists for).
type doubleDeliveryError struct {
	id       uint64
	reserves uint32
}

func (e *doubleDeliveryError) Error() string {
	return fmt.Sprintf("job %d delivered %d times (reserved twice)", e.id, e.reserves)
}

func newLedger() *ledger {
	l := &ledger{}
	for i := range l.shards {
		l.shards[i].jobs = make(map[uint64]*jobMark)
	}
	return l
}

// mark applies fn to the id's record under its shard lock.
func (l *ledger) mark(id uint64, fn func(*jobMark) error) error {
	s := &l.shards[id%ledgerShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.jobs[id]
	if m == nil {
		m = &jobMark{}
		s.jobs[id] = m
	}
	return fn(m)
}

// Inserted records an INSERTED id. A consumer may reserve the job before the producer has read
// INSERTED, so the record may already exist.
func (l *ledger) Inserted(id uint64) error {
	err := l.mark(id, func(m *jobMark) error {
		if m.inserted {
			return fmt.Errorf("job id %d INSERTED twice", id)
		}
		m.inserted = true
		return nil
	})
	if err == nil {
		l.inserted.Add(1)
	}
	return err
}

// Reserved records a RESERVED id; the second reservation of any id fails the round. Benchmark jobs
// carry a TTR far longer than a round, so a legitimate timeout re-delivery cannot happen.
func (l *ledger) Reserved(id uint64) error {
	return l.mark(id, func(m *jobMark) error {
		m.reserves++
		if m.reserves > 1 {
			return &doubleDeliveryError{id: id, reserves: m.reserves}
		}
		return nil
	})
}

// Deleted records a DELETED reply for the id.
func (l *ledger) Deleted(id uint64) error {
	err := l.mark(id, func(m *jobMark) error {
		m.deletes++
		if m.deletes > 1 {
			return fmt.Errorf("job %d DELETED twice", id)
		}
		return nil
	})
	if err == nil {
		l.deleted.Add(1)
	}
	return err
}

// Backlog is the number of jobs inserted but not yet deleted.
func (l *ledger) Backlog() int64 { return l.inserted.Load() - l.deleted.Load() }

// UndeletedIDs lists every inserted id not yet deleted, so a round can clean up by id.
func (l *ledger) UndeletedIDs() []uint64 {
	var ids []uint64
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for id, m := range s.jobs {
			if m.inserted && m.deletes == 0 {
				ids = append(ids, id)
			}
		}
		s.mu.Unlock()
	}
	return ids
}

// Verify checks the end of a round: every inserted job deleted exactly once, and nothing
// reserved or deleted that was never INSERTED to us.
func (l *ledger) Verify() error {
	var lost, strangers int
	var example uint64
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for id, m := range s.jobs {
			switch {
			case m.inserted && m.deletes != 1:
				lost++
				example = id
			case !m.inserted:
				strangers++
				example = id
			}
		}
		s.mu.Unlock()
	}
	if lost > 0 {
		return fmt.Errorf("%d jobs inserted but not deleted exactly once (e.g. id %d)", lost, example)
	}
	if strangers > 0 {
		return fmt.Errorf("%d jobs reserved or deleted without an INSERTED reply (e.g. id %d)", strangers, example)
	}
	if in, del := l.inserted.Load(), l.deleted.Load(); in != del {
		return fmt.Errorf("put %d jobs but deleted %d", in, del)
	}
	return nil
}

// jobs is what a round's costs are divided by: jobs deleted, or inserted where none are (put).
func (l *ledger) jobs() int64 {
	if d := l.deleted.Load(); d > 0 {
		return d
	}
	return l.inserted.Load()
}
