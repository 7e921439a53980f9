package ctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// dial opens a beanstalk connection, authenticating first when a token is given (beangate's
// --auth-token-file).
func (o *options) dial() (*beanstalk.Conn, error) {
	c, err := o.tls.dialer().Dial(context.Background(), o.addr)
	if err != nil {
		return nil, err
	}
	if o.token != "" {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := c.Auth(o.token); err != nil {
			_ = c.Close()
			var re *beanstalk.ReplyError
			var mismatch *beanstalk.TLSMismatchError
			if errors.As(err, &mismatch) {
				return nil, err
			}
			if errors.As(err, &re) {
				return nil, fmt.Errorf("auth refused by %s: %q", o.addr, re.Reply)
			}
			return nil, fmt.Errorf("auth refused by %s: %w", o.addr, err)
		}
		_ = c.SetDeadline(time.Time{})
	}
	return c, nil
}

// typed turns a stats map's numbers into numbers, for JSON.
func typed(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		} else if f, err := strconv.ParseFloat(v, 64); err == nil && strings.Contains(v, ".") {
			out[k] = f
		} else {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// tubeRow is one line of `tubes` and `top`.
type tubeRow struct {
	Name          string  `json:"name"`
	Ready         int64   `json:"ready"`
	Urgent        int64   `json:"urgent"`
	Reserved      int64   `json:"reserved"`
	Delayed       int64   `json:"delayed"`
	Buried        int64   `json:"buried"`
	Total         int64   `json:"total"`
	Watching      int64   `json:"watching"`
	Waiting       int64   `json:"waiting"`
	Deletes       int64   `json:"deletes"`
	PauseLeft     int64   `json:"pause_left"`
	PutsPerSec    float64 `json:"puts_per_sec"`
	DeletesPerSec float64 `json:"deletes_per_sec"`
}

// readTubes reads every tube's stats-tube, sorted by name.
func readTubes(c *beanstalk.Conn) ([]tubeRow, error) {
	names, err := c.ListTubes()
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	rows := make([]tubeRow, 0, len(names))
	for _, name := range names {
		st, err := c.StatsTube(name)
		if err != nil {
			continue // gone since list-tubes
		}
		rows = append(rows, tubeRow{
			Name: name, Ready: atoi(st["current-jobs-ready"]), Urgent: atoi(st["current-jobs-urgent"]),
			Reserved: atoi(st["current-jobs-reserved"]), Delayed: atoi(st["current-jobs-delayed"]),
			Buried: atoi(st["current-jobs-buried"]), Total: atoi(st["total-jobs"]),
			Watching: atoi(st["current-watching"]), Waiting: atoi(st["current-waiting"]),
			Deletes: atoi(st["cmd-delete"]), PauseLeft: atoi(st["pause-time-left"]),
		})
	}
	return rows, nil
}

// peekState peeks at the next job of tube in state: ready, delayed or buried.
func peekState(c *beanstalk.Conn, tube, state string) (uint64, []byte, error) {
	switch state {
	case "ready", "delayed", "buried":
	default:
		return 0, nil, usageError{fmt.Errorf("state %q: ready, delayed or buried", state)}
	}
	if err := c.Use(tube); err != nil {
		return 0, nil, err
	}
	id, body, err := c.PeekState(state)
	return id, bytes.Clone(body), err
}

// seconds is a duration in the protocol's whole seconds.
func seconds(d time.Duration) (uint32, error) {
	if d < 0 {
		return 0, fmt.Errorf("duration must be non-negative, got %v", d)
	}
	s := d / time.Second
	if s > math.MaxUint32 {
		return 0, fmt.Errorf("duration %v is too long", d)
	}
	return uint32(s), nil
}
