package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/beangate/beangate/configs"
)

// healthcheckTimeout bounds the whole request: /readyz and /healthz answer at once when the
// process is alive.
const healthcheckTimeout = 5 * time.Second

// healthcheck is `beangate healthcheck [--live] [SERVER OPTIONS]`, a container's health check
// that needs neither a shell nor curl: it GETs /readyz (/healthz with --live) from the ops
// listener the server's settings name (--http, else --metrics-http; flags, BEANGATE_* and
// --config as the server reads them) and exits 0 on 200, 1 otherwise. Given no server options,
// it reads those of the beangate running as process 1 (a container's entry point), so that a
// `docker run IMAGE --http …` is checked where it serves.
func healthcheck(ctx context.Context, p process, args []string) int {
	live := false
	var serverArgs []string
	for _, a := range args {
		switch a {
		case "--live":
			live = true
		case "-h", "--help":
			fmt.Fprint(p.stdout, healthcheckUsage)
			return exitOK
		default:
			serverArgs = append(serverArgs, a)
		}
	}
	if len(serverArgs) == 0 {
		serverArgs = p.entrypointArgs()
	}
	fs := newFlagSet()
	if err := fs.Parse(serverArgs); err != nil {
		fmt.Fprintf(p.stderr, "beangate healthcheck: %v\n", err)
		return exitUsage
	}
	cfg, _, err := configs.Load(fs)
	if err != nil {
		fmt.Fprintf(p.stderr, "beangate healthcheck: %v\n", err)
		return exitUsage
	}
	path := "/readyz"
	if live {
		path = "/healthz"
	}
	url, err := opsURL(cfg)
	if err != nil {
		fmt.Fprintf(p.stderr, "beangate healthcheck: %v\n", err)
		return exitFailure
	}
	code, body, err := httpGet(ctx, url+path)
	if err != nil {
		fmt.Fprintf(p.stderr, "beangate healthcheck: %v\n", err)
		return exitFailure
	}
	if code != http.StatusOK {
		fmt.Fprintf(p.stderr, "beangate healthcheck: %s%s: %d %s", url, path, code, body)
		return exitFailure
	}
	fmt.Fprint(p.stdout, body)
	return exitOK
}

const healthcheckUsage = `Usage: beangate healthcheck [--live] [SERVER OPTIONS]

GETs /readyz (with --live: /healthz) from the ops listener the server's options name (--http,
else --metrics-http, from flags, BEANGATE_* or --config as the server reads them) and exits 0
on 200, 1 otherwise. Without SERVER OPTIONS it reads those of the beangate running as process
1, a container's entry point.
`

// opsURL is the base URL at which this host reaches the ops listener (or the metrics listener,
// which serves /readyz and /healthz too): an address that listens on every interface is
// reached on loopback.
func opsURL(cfg configs.Config) (string, error) {
	addr := cfg.HTTP
	if addr == "" {
		addr = cfg.Metrics.HTTP
	}
	if addr == "" {
		return "", errors.New("no ops listener: the server needs --http or --metrics-http (or BEANGATE_HTTP, BEANGATE_METRICS_HTTP)")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("ops listener %q: %w", addr, err)
	}
	if port == "0" {
		return "", fmt.Errorf("ops listener %q: port 0 is any free port, which a health check cannot know", addr)
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

func httpGet(ctx context.Context, url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return 0, "", err
	}
	return resp.StatusCode, string(body), nil
}

// entrypointArgs are the options of the beangate server running as process 1, nil when process
// 1 is something else (an init such as tini, a shell) or a beangate command rather than a server.
func (p process) entrypointArgs() []string {
	var cmdline []string
	if p.pid1Cmdline != nil {
		cmdline = p.pid1Cmdline()
	} else if os.Getpid() != 1 {
		raw, err := os.ReadFile("/proc/1/cmdline")
		if err != nil {
			return nil
		}
		cmdline = strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	}
	if len(cmdline) < 2 || filepath.Base(cmdline[0]) != "beangate" || !strings.HasPrefix(cmdline[1], "-") {
		return nil
	}
	return cmdline[1:]
}
