package redis

import (
	"context"
	"errors"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/internal/batch"
)

// maxProbeTimeout bounds each probe of a Redis known to be unreachable.
const maxProbeTimeout = time.Second

// isOutage tells the failures that say Redis cannot be reached (a timeout, a broken or refused
// connection, no master known to the sentinels) or cannot take writes here (a replica, a
// server loading its data or without a master) from Redis's answers to a script. After one,
// calls fail at once until a PING answers (backend.Reachability). Replicas slow to acknowledge
// a WAIT are not an outage of the master.
func isOutage(err error) bool {
	if err == nil || errors.Is(err, goredis.Nil) || errors.Is(err, context.Canceled) || errors.Is(err, batch.ErrClosed) ||
		errors.Is(err, errNotReplicated) {
		return false
	}
	var reply goredis.Error
	if errors.As(err, &reply) {
		msg := reply.Error()
		for _, code := range []string{"READONLY", "LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"} {
			if strings.HasPrefix(msg, code) {
				return true
			}
		}
		return false
	}
	return true
}
