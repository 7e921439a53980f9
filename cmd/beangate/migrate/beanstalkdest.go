package migrate

import (
	"context"
	"fmt"
	"time"

	"github.com/beangate/beangate/backend"
)

// beanstalkDest puts jobs on a beanstalk server: new ids, no counters or age, and no key record
// — a crash between a put and the source's delete leaves that batch on both (at least once).
// Buried jobs are put, then reserved by id and buried (reserve-job: 1.12+).
type beanstalkDest struct {
	c     *conn
	using string
}

func openBeanstalkDest(ctx context.Context, addr string) (*beanstalkDest, error) {
	c, err := dial(ctx, addr)
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
			d.c.send("use %s", j.Tube)
			using = j.Tube
		}
		delay := 0
		if j.State == backend.Delayed {
			delay = int(j.TimeLeft.Round(time.Second) / time.Second)
		}
		d.c.sendBody(fmt.Sprintf("put %d %d %d %d", j.Priority, delay, int(j.TTR/time.Second), len(j.Body)), j.Body)
	}
	if err := d.c.flush(); err != nil {
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
			if _, _, err := d.c.reply("USING"); err != nil {
				return out, fmt.Errorf("use: %w", err)
			}
			using = j.Tube
			d.using = using
		}
		f, _, err := d.c.reply("INSERTED")
		if err != nil {
			return out, fmt.Errorf("put: %w", err)
		}
		var id uint64
		fmt.Sscan(f[1], &id)
		out = append(out, backend.Imported{ID: id, Outcome: backend.IDChanged})
		if j.State == backend.Buried {
			buried = append(buried, bury{id, j.Priority})
		}
	}
	for _, b := range buried {
		d.c.send("reserve-job %d", b.id)
		d.c.send("bury %d %d", b.id, b.pri)
	}
	if err := d.c.flush(); err != nil {
		return out, err
	}
	for range buried {
		if _, _, err := d.c.reply("RESERVED"); err != nil {
			return out, fmt.Errorf("reserve-job: %w", err)
		}
		if _, _, err := d.c.reply("BURIED"); err != nil {
			return out, fmt.Errorf("bury: %w", err)
		}
	}
	return out, nil
}

func (d *beanstalkDest) PauseTube(_ context.Context, tube string, p time.Duration) error {
	_, _, err := d.c.call("PAUSED", "pause-tube %s %d", tube, int(p.Round(time.Second)/time.Second))
	if err == errNotFound {
		return nil
	}
	return err
}

func (d *beanstalkDest) ExactlyOnce() bool { return false }
func (d *beanstalkDest) Notes() []string   { return nil }
func (d *beanstalkDest) Close() error      { return d.c.Close() }
