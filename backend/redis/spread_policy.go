package redis

import (
	"context"
	"errors"
)

// Tube policies in the spread layout: the namespace's policies are kept in the home slot (what
// Policy and ListPolicies read), and each bucket in use keeps a copy, which its scripts apply
// as the one-slot layout's do: setting or clearing one writes the home slot and then every
// bucket in use; a bucket that a new tube's placement brings into use gets every policy.

// copyPolicies gives buckets every policy of the namespace.
func (b *Backend) copyPolicies(ctx context.Context, buckets []int) error {
	all, err := b.client.HGetAll(ctx, b.policiesKey()).Result()
	if err != nil {
		return opErr("copying policies", err)
	}
	for pattern, text := range all {
		for _, rep := range b.fanOut(ctx, buckets, opPolicySet, func(int) []any { return []any{pattern, text} }) {
			if rep.err != nil {
				return rep.err
			}
		}
	}
	return nil
}

// spreadPolicyCall runs a policy change in the home slot, then in every bucket in use.
func (b *Backend) spreadPolicyCall(ctx context.Context, o op, args ...any) error {
	if _, err := b.call(ctx, o, args...); err != nil {
		return err
	}
	if err := b.loadPlacements(ctx); err != nil { // every bucket in use now: see copyPolicies
		return err
	}
	var errs []error
	for _, rep := range b.fanOut(ctx, b.spread.usedBuckets(), o, func(int) []any { return args }) {
		errs = append(errs, rep.err)
	}
	return errors.Join(errs...)
}

// spreadSweep runs the policy sweep in every bucket in use, and tells how many tubes policies
// govern there.
func (b *Backend) spreadSweep(ctx context.Context) (int64, error) {
	var n int64
	var errs []error
	for _, rep := range b.fanOut(ctx, b.spread.usedBuckets(), opPolicySweep, func(int) []any { return nil }) {
		v, err := toInt(opPolicySweep, rep.res)
		n += v
		errs = append(errs, rep.err, err)
	}
	return n, errors.Join(errs...)
}
