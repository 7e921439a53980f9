package ctl

import (
	"errors"
	"fmt"

	"github.com/beangate/beangate/internal/beanstalk"
)

// errAPIUnauthorized is the ops listener's 401.
var errAPIUnauthorized = errors.New("401 Unauthorized")

// withHint adds what to do to the errors a flag fixes: a gateway or its ops listener asking
// for credentials.
func (o *options) withHint(err error) error {
	var re *beanstalk.ReplyError
	switch {
	case errors.As(err, &re) && re.Reply == "UNAUTHORIZED":
		if o.token == "" {
			return fmt.Errorf("%w: the server wants a token first: pass --token TOKEN (or BEANGATE_CTL_TOKEN), a line of its --auth-token-file", err)
		}
		return fmt.Errorf("%w: the server refused the --token given", err)
	case errors.Is(err, errAPIUnauthorized):
		if o.token == "" && o.password == "" {
			return fmt.Errorf("%w: the ops listener wants credentials: pass --token TOKEN (or BEANGATE_CTL_TOKEN), a line of the gateway's --auth-token-file, or --password (or BEANGATE_CTL_PASSWORD) for the console user --user", err)
		}
		return fmt.Errorf("%w: the ops listener refused the credentials given (--token, or --user and --password)", err)
	}
	return err
}
