package procfs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/procfs"
)

// A real beanstalkd is found by its port, and its memory read.
func TestListenerPIDFindsBeanstalkd(t *testing.T) {
	addr := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	pid, err := procfs.ListenerPID(addr)
	require.NoError(t, err)
	kib, err := procfs.RSSKiB(pid)
	require.NoError(t, err)
	require.Positive(t, kib)
	_, err = procfs.ListenerPID("127.0.0.1:1")
	require.Error(t, err, "nothing listens on port 1")
}
