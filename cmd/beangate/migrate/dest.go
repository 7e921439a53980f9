package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/beangate/beangate/backend"
)

// Destination is where jobs go.
type Destination interface {
	Import(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, error)
	// PauseTube pauses a tube that holds jobs for d.
	PauseTube(ctx context.Context, tube string, d time.Duration) error
	// ExactlyOnce tells whether the destination records import keys (a beangate store): a crash
	// between the import and the source's delete is then recognised on the next run.
	ExactlyOnce() bool
	// Notes are what the destination could not keep, for the report.
	Notes() []string
	Close() error
}

// storeDest is a beangate store, which imports.
type storeDest struct {
	b        backend.Backend
	noPause  bool     // a binlog directory: beanstalkd's format keeps no pauses
	unpaused []string // tubes it could not pause
}

// NewStoreDest makes a destination of a beangate store.
func NewStoreDest(b backend.Backend) Destination { return &storeDest{b: b} }

// NewBinlogDest makes a destination of the memory store on a binlog directory, which a server
// will serve later: a pause would not outlive this process (the binlog format has no record of
// pauses), so it is reported instead.
func NewBinlogDest(b backend.Backend) Destination { return &storeDest{b: b, noPause: true} }

func (d *storeDest) Import(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, error) {
	return d.b.Import(ctx, jobs)
}

func (d *storeDest) PauseTube(ctx context.Context, tube string, p time.Duration) error {
	if d.noPause {
		d.unpaused = append(d.unpaused, fmt.Sprintf("%s (%s left)", tube, p.Round(time.Second)))
		return nil
	}
	err := d.b.PauseTube(ctx, tube, p)
	if errors.Is(err, backend.ErrNotFound) {
		return nil // the tube is gone already (its jobs were taken)
	}
	return err
}

func (d *storeDest) ExactlyOnce() bool { return true }

func (d *storeDest) Notes() []string {
	if len(d.unpaused) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("a binlog directory keeps no pauses (beanstalkd's format has no record of them): pause these tubes again once the server runs: %s", strings.Join(d.unpaused, ", "))}
}
func (d *storeDest) Close() error { return d.b.Close() }
