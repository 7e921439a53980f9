package migrate

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// OpenSource opens --from: beanstalk[s]://HOST:PORT (a running server) or binlog:DIR (a stopped
// one's directory; binlog.ErrLocked while a server holds it). tubes is --tubes; follow keeps a
// beanstalk source moving until the context ends.
func OpenSource(ctx context.Context, from, tubes string, follow bool, log *slog.Logger) (Source, error) {
	switch {
	case IsBeanstalkURL(from):
		return openBeanstalkSource(ctx, from, matcher(tubes), follow, log)
	case strings.HasPrefix(from, "binlog:"):
		if follow {
			return nil, fmt.Errorf("--follow needs a running server (beanstalk://), not a binlog directory")
		}
		return openBinlogSource(strings.TrimPrefix(from, "binlog:"), matcher(tubes), log)
	}
	return nil, fmt.Errorf("%w: --from %q: want beanstalk://HOST:PORT, beanstalks://HOST:PORT or binlog:DIR", ErrBadURL, from)
}

// OpenBeanstalkDest opens a beanstalk://HOST:PORT or beanstalks://HOST:PORT destination.
func OpenBeanstalkDest(ctx context.Context, to string) (Destination, error) {
	return openBeanstalkDest(ctx, to)
}
