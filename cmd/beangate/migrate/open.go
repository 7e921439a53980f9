package migrate

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// OpenSource opens --from: beanstalk://HOST:PORT (a running server) or binlog:DIR (a stopped
// one's directory; binlog.ErrLocked while a server holds it). tubes is --tubes; follow keeps a
// beanstalk source moving until the context ends.
func OpenSource(ctx context.Context, from, tubes string, follow bool, log *slog.Logger) (Source, error) {
	switch {
	case strings.HasPrefix(from, "beanstalk://"):
		return openBeanstalkSource(ctx, strings.TrimSuffix(strings.TrimPrefix(from, "beanstalk://"), "/"), matcher(tubes), follow, log)
	case strings.HasPrefix(from, "binlog:"):
		if follow {
			return nil, fmt.Errorf("--follow needs a running server (beanstalk://), not a binlog directory")
		}
		return openBinlogSource(strings.TrimPrefix(from, "binlog:"), matcher(tubes), log)
	}
	return nil, fmt.Errorf("--from %q: want beanstalk://HOST:PORT or binlog:DIR", from)
}

// OpenBeanstalkDest opens a beanstalk://HOST:PORT destination.
func OpenBeanstalkDest(ctx context.Context, to string) (Destination, error) {
	addr, ok := strings.CutPrefix(to, "beanstalk://")
	if !ok {
		return nil, fmt.Errorf("--to %q is not beanstalk://HOST:PORT", to)
	}
	return openBeanstalkDest(ctx, strings.TrimSuffix(addr, "/"))
}
