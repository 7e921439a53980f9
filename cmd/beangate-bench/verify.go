package main

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/beangate/beangate/internal/beanstalk"
)

// finish ends a round: delete by id whatever was put but not consumed (the put and drain
// scenarios leave jobs behind on purpose), drain the tubes to confirm nothing is left, and
// check the ledger.
func (r *round) finish() error {
	if err := r.deleteLeftovers(); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	if err := r.confirmEmpty(); err != nil {
		return err
	}
	return r.ledger.Verify()
}

// deleteLeftovers deletes the ledger's undeleted jobs with pipelined deletes on a few
// connections; each must answer DELETED.
func (r *round) deleteLeftovers() error {
	ids := r.ledger.UndeletedIDs()
	if len(ids) == 0 {
		return nil
	}
	const conns, depth = 4, 64
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(r.target.primary())
			if err != nil {
				errs[w] = err
				return
			}
			defer c.Close()
			for start := w * depth; start < len(ids); start += conns * depth {
				batch := ids[start:min(start+depth, len(ids))]
				for _, id := range batch {
					c.SendDelete(id)
				}
				if err := c.Flush(); err != nil {
					errs[w] = err
					return
				}
				for _, id := range batch {
					if err := c.Expect("DELETED"); err != nil {
						errs[w] = fmt.Errorf("job %d: %w", id, err)
						return
					}
					if err := r.ledger.Deleted(id); err != nil {
						errs[w] = err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// confirmEmpty reserves from every round tube with a zero timeout (anything it gets is a job
// the harness lost track of) and checks stats-tube counts no job in any state.
func (r *round) confirmEmpty() error {
	c, err := dial(r.target.primary())
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.WatchOnly(r.tubes...); err != nil {
		return err
	}
	c.Send("reserve-with-timeout 0")
	if err := c.Flush(); err != nil {
		return err
	}
	id, _, err := c.ReadJob("RESERVED")
	if err == nil {
		return fmt.Errorf("tube not empty after the round: reserved job %d", id)
	}
	if !errors.Is(err, beanstalk.ErrTimedOut) {
		return err
	}
	for _, tube := range r.tubes {
		n, err := tubeJobs(c, tube)
		if err != nil {
			return err
		}
		if n != 0 {
			return fmt.Errorf("tube %s still holds %d jobs after the round", tube, n)
		}
	}
	return nil
}

// tubeJobs is the tube's job count in every state, from stats-tube.
func tubeJobs(c *beanstalk.Conn, tube string) (int, error) {
	stats, err := c.StatsTube(tube)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, key := range []string{"current-jobs-ready", "current-jobs-reserved", "current-jobs-delayed", "current-jobs-buried"} {
		v, err := strconv.Atoi(stats.String(key))
		if err != nil {
			return 0, fmt.Errorf("stats-tube %s: %s: %q", tube, key, stats[key])
		}
		total += v
	}
	return total, nil
}
