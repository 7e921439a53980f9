package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/beanstalk"
)

// beanstalkDest puts jobs on a beanstalk server: new ids, no counters or age, and no key record
// — a crash between a put and the source's delete leaves that batch on both (at least once).
// Buried jobs are put, then reserved by id and buried (reserve-job: 1.12+).
type beanstalkDest struct {
	c     *beanstalk.Conn
	using string
}

func openBeanstalkDest(ctx context.Context, url string) (*beanstalkDest, error) {
	c, _, err := dialBeanstalkURL(ctx, url)
	if err != nil {
		return nil, err
	}
	return &beanstalkDest{c: c, using: "default"}, nil
}

func (d *beanstalkDest) Import(_ context.Context, jobs []backend.ImportJob) ([]backend.Imported, error) {
	out := make([]backend.Imported, 0, len(jobs))
	// Puts are pipelined; a use goes before each change of tube.
	using := d.using
	for _, j := range jobs {
		if j.Tube != using {
			d.c.Send("use " + j.Tube)
			using = j.Tube
		}
		var delay uint32
		if j.State == backend.Delayed {
			delay = uint32(j.TimeLeft.Round(time.Second) / time.Second)
		}
		d.c.SendPut(j.Priority, delay, uint32(j.TTR/time.Second), j.Body)
	}
	if err := d.c.Flush(); err != nil {
		return nil, err
	}
	using = d.using
	type bury struct {
		id  uint64
		pri uint32
	}
	var buried []bury
	for _, j := range jobs {
		if j.Tube != using {
			if err := d.c.Expect("USING"); err != nil {
				return out, fmt.Errorf("use: %w", err)
			}
			using = j.Tube
			d.using = using
		}
		id, err := d.c.ReadUint("INSERTED")
		if err != nil {
			return out, fmt.Errorf("put: %w", err)
		}
		out = append(out, backend.Imported{ID: id, Outcome: backend.IDChanged})
		if j.State == backend.Buried {
			buried = append(buried, bury{id, j.Priority})
		}
	}
	for _, b := range buried {
		d.c.Sendf("reserve-job %d", b.id)
		d.c.Sendf("bury %d %d", b.id, b.pri)
	}
	if err := d.c.Flush(); err != nil {
		return out, err
	}
	for range buried {
		if _, _, err := d.c.ReadJob("RESERVED"); err != nil {
			return out, fmt.Errorf("reserve-job: %w", err)
		}
		if err := d.c.Expect("BURIED"); err != nil {
			return out, fmt.Errorf("bury: %w", err)
		}
	}
	return out, nil
}

func (d *beanstalkDest) PauseTube(_ context.Context, tube string, p time.Duration) error {
	err := d.c.PauseTube(tube, uint64(p.Round(time.Second)/time.Second))
	if errors.Is(err, beanstalk.ErrNotFound) {
		return nil
	}
	return err
}

func (d *beanstalkDest) ExactlyOnce() bool { return false }
func (d *beanstalkDest) Notes() []string   { return nil }
func (d *beanstalkDest) Close() error      { return d.c.Close() }
