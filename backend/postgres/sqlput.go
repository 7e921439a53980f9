package postgres

import "context"

// recordMaxJobSize makes this gateway's -z the body limit of the SQL put (migration 014), so that
// a job put with SQL is one a gateway would have accepted. Gateways of one store are meant to
// share one -z; with several, the last started sets it.
func (b *Backend) recordMaxJobSize(ctx context.Context) error {
	if b.opts.MaxJobSize <= 0 {
		return nil
	}
	_, err := b.pool.Exec(ctx, b.st.get("set_max_job_size"), int64(b.opts.MaxJobSize))
	return opErr("recording max-job-size", err)
}
