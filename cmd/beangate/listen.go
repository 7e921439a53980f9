package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/beangate/beangate/configs"
)

// listen binds cfg.Listen: "unix:PATH" for a unix socket (cfg.Port ignored, as in beanstalkd),
// otherwise a TCP host or IP with cfg.Port.
func listen(cfg configs.Config) (net.Listener, error) {
	if path, ok := strings.CutPrefix(cfg.Listen, "unix:"); ok {
		if err := removeStaleSocket(path); err != nil {
			return nil, err
		}
		return net.Listen("unix", path)
	}
	return net.Listen("tcp", net.JoinHostPort(cfg.Listen, strconv.Itoa(cfg.Port)))
}

// listenAddr is where the server listens, in the words of cfg.Listen: a host as given (Go
// reports 0.0.0.0 as [::], the dual-stack socket it binds) with the port bound (-p 0 picks one).
func listenAddr(cfg configs.Config, bound net.Addr) string {
	tcp, ok := bound.(*net.TCPAddr)
	if !ok {
		return bound.String()
	}
	return net.JoinHostPort(cfg.Listen, strconv.Itoa(tcp.Port))
}

// removeStaleSocket deletes a socket file an earlier run left behind, as beanstalkd does. Unlike
// beanstalkd it refuses when the path is not a socket (a typo must not delete a file) or when a
// server still answers on it (a second instance must not steal the first one's socket).
func removeStaleSocket(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		_ = c.Close()
		return fmt.Errorf("%s: another server is listening on it", path)
	}
	return os.Remove(path)
}
