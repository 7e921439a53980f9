package memory

import (
	"context"

	"github.com/beangate/beangate/backend"
)

// JobHolder tells the reserved job's owner session.
func (b *Backend) JobHolder(ctx context.Context, id uint64) (backend.SessionID, error) {
	if _, err := b.begin(ctx, "job-holder"); err != nil { // begin applies time: an expired reservation is ready
		return "", err
	}
	defer b.end()
	j := b.jobs.Get(id)
	if j == nil {
		return "", backend.ErrNotFound
	}
	if j.state != jobReserved || j.owner == nil {
		return "", nil
	}
	return j.owner.id, nil
}
