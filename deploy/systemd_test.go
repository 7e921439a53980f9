package deploy

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"
)

const unitFile = "../configs/systemd/beangate.service"

// unitSettings are the [Service] section's settings: name to values, in order.
func unitSettings(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(unitFile)
	require.NoError(t, err)
	settings := map[string][]string{}
	section := ""
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			name, value, ok := strings.Cut(line, "=")
			require.True(t, ok, "line %q", line)
			settings[name] = append(settings[name], value)
		}
	}
	return settings
}

// execStart expands the unit's ExecStart as systemd does for the forms it uses: "${NAME}" is
// one word, even empty, and "$NAME" as a word of its own is the value split at whitespace.
// The environment is the unit's Environment= settings, overridden by the environment file's.
func execStart(t *testing.T, s map[string][]string, envFile string) (args []string, env map[string]string) {
	t.Helper()
	env = map[string]string{}
	for _, assignments := range s["Environment"] {
		for _, a := range strings.Fields(assignments) {
			name, value, _ := strings.Cut(a, "=")
			env[name] = value
		}
	}
	require.Equal(t, []string{"-/etc/default/beanstalkd"}, s["EnvironmentFile"], "optional: a host without beanstalkd has none")
	for _, line := range strings.Split(envFile, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		env[name] = strings.Trim(value, `"`)
	}
	require.Len(t, s["ExecStart"], 1)
	words := strings.Fields(s["ExecStart"][0])
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "$") && !strings.HasPrefix(w, "${") {
			args = append(args, strings.Fields(env[w[1:]])...)
			continue
		}
		for name, value := range env {
			w = strings.ReplaceAll(w, "${"+name+"}", value)
		}
		require.NotContains(t, w, "$", "an unset variable in ExecStart")
		args = append(args, w)
	}
	return args, env
}

// The unit starts beangate with a valid command line on a host that never ran beanstalkd and
// on one that did (Debian's /etc/default/beanstalkd, binlog on), with the settings file its
// install steps put in place; its stop timeout covers the graceful stop, and the binlog
// directory is writable under ProtectSystem=strict.
func TestSystemdUnitCommandLine(t *testing.T) {
	s := unitSettings(t)
	example, err := os.ReadFile("../configs/beangate.example.yaml")
	require.NoError(t, err)
	files := map[string]string{"/etc/beangate/beangate.yaml": string(example)}
	const debian = `## Defaults for the beanstalkd init script, /etc/init.d/beanstalkd on
BEANSTALKD_LISTEN_ADDR=0.0.0.0
BEANSTALKD_LISTEN_PORT=11301
BEANSTALKD_EXTRA="-b /var/lib/beanstalkd"
`
	tests := []struct {
		name    string
		envFile string
		listen  string
		port    int
		binlog  string
	}{
		{"NoBeanstalkdBefore", "", "127.0.0.1", 11300, ""},
		{"DebianBeanstalkdDefaults", debian, "0.0.0.0", 11301, "/var/lib/beanstalkd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, env := execStart(t, s, tt.envFile)
			cfg := serverConfig(t, args, env, files)
			require.Equal(t, tt.listen, cfg.Listen)
			require.Equal(t, tt.port, cfg.Port)
			require.Equal(t, tt.binlog, cfg.Binlog.Dir)
			if cfg.Binlog.Dir != "" {
				require.Equal(t, []string{filepath.Base(cfg.Binlog.Dir)}, s["StateDirectory"], "-b is writable")
				require.Equal(t, "/var/lib", filepath.Dir(cfg.Binlog.Dir))
			}
			stop, err := time.ParseDuration(s["TimeoutStopSec"][0] + "s")
			require.NoError(t, err)
			require.GreaterOrEqual(t, stop, cfg.ShutdownDelay+cfg.ShutdownTimeout+5*time.Second, "TimeoutStopSec")
		})
	}
	require.True(t, strings.HasPrefix(s["ExecStart"][0], "/usr/local/bin/beangate "), "where the install steps put it")
	for name, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"CapabilityBoundingSet": "", "SystemCallArchitectures": "native", "RestartPreventExitStatus": "5 10",
		"Restart": "on-failure", "KillSignal": "SIGTERM",
	} {
		require.Equal(t, []string{want}, s[name], name)
	}
	require.Contains(t, s["SystemCallFilter"], "@system-service")
}

// systemd-analyze verify reads the unit as systemd would (an unknown setting, a bad value or a
// missing program is reported), and its security review rates the sandbox. Where systemd is
// not installed the check is skipped: the command is absent.
func TestSystemdUnitVerifies(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed: the unit is not verified here")
	}
	raw, err := os.ReadFile(unitFile)
	require.NoError(t, err)
	// The program must exist: one stands in for /usr/local/bin/beangate.
	dir := t.TempDir()
	program := filepath.Join(dir, "beangate")
	require.NoError(t, os.WriteFile(program, []byte("#!/bin/sh\n"), 0o755))
	unit := strings.Replace(string(raw), "ExecStart=/usr/local/bin/beangate ", "ExecStart="+program+" ", 1)
	require.NotEqual(t, string(raw), unit)
	path := filepath.Join(dir, "beangate.service")
	require.NoError(t, os.WriteFile(path, []byte(unit), 0o644))

	out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Empty(t, string(out), "warnings are problems too")
	// Exposure 0 (locked down) to 10 (none): at most 2.
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=20", path).CombinedOutput()
	require.NoError(t, err, "exposure above 2.0:\n%s", out)
}

// The unit's command line, run: the server started with ExecStart as systemd expands it and
// the unit's environment only, every absolute path of the unit under a root of the test's own
// (and the port moved off 11300 by /etc/default/beanstalkd, as an operator would). The YAML
// file is optional: without it the server serves on the other settings; with it, the file's
// settings apply. A --config on the command line must exist: exit 5.
func TestSystemdUnitRunsTheServer(t *testing.T) {
	t.Parallel()
	binary := buildBeangate(t)
	s := unitSettings(t)
	tests := []struct {
		name   string
		extra  string // BEANSTALKD_EXTRA in /etc/default/beanstalkd
		config string // /etc/beangate/beangate.yaml; none when empty
		// check runs against the serving server; nil: it must exit 5 instead.
		check func(t *testing.T, c *beanstalk.Conn, root string)
		log   string // in its log
	}{
		{name: "WithoutTheFile", check: func(t *testing.T, c *beanstalk.Conn, _ string) {
			_, err := c.Put(make([]byte, 200), 0, 0, time.Minute)
			require.NoError(t, err, "the default max job size")
		}, log: "optional config file"},
		{name: "WithTheFile", config: "max_job_size: 100\n", check: func(t *testing.T, c *beanstalk.Conn, _ string) {
			_, err := c.Put(make([]byte, 200), 0, 0, time.Minute)
			require.ErrorIs(t, err, beanstalk.ErrJobTooBig, "the file's max_job_size")
		}},
		{name: "DebianBinlogWithoutTheFile", extra: "-b /var/lib/beanstalkd", check: func(t *testing.T, c *beanstalk.Conn, root string) {
			_, err := c.Put([]byte("kept"), 0, 0, time.Minute)
			require.NoError(t, err)
			logs, err := filepath.Glob(filepath.Join(root, "var/lib/beanstalkd/binlog.*"))
			require.NoError(t, err)
			require.NotEmpty(t, logs, "-b from BEANSTALKD_EXTRA")
		}, log: "optional config file"},
		{name: "ConfigFlagMissing", extra: "--config /etc/beangate/other.yaml", log: "/etc/beangate/other.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			// StateDirectory= makes the binlog directory before the start.
			require.NoError(t, os.MkdirAll(filepath.Join(root, "var/lib", s["StateDirectory"][0]), 0o700))
			if tt.config != "" {
				file := filepath.Join(root, "etc/beangate/beangate.yaml")
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				require.NoError(t, os.WriteFile(file, []byte(tt.config), 0o644))
			}
			port := freeLoopbackPort(t)
			args, env := execStart(t, s, fmt.Sprintf("BEANSTALKD_LISTEN_PORT=%d\nBEANSTALKD_EXTRA=%q\n", port, tt.extra))
			under := func(v string) string { // an absolute path of the unit, moved under root
				if rest, optional := strings.CutPrefix(v, "-"); optional && strings.HasPrefix(rest, "/") {
					return "-" + root + rest
				}
				if strings.HasPrefix(v, "/") {
					return root + v
				}
				return v
			}
			cmd := exec.Command(binary)
			for _, a := range args {
				cmd.Args = append(cmd.Args, under(a))
			}
			for name, value := range env {
				cmd.Env = append(cmd.Env, name+"="+under(value))
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			if tt.check == nil {
				select {
				case err := <-exited:
					var exit *exec.ExitError
					require.ErrorAs(t, err, &exit, "log:\n%s", stderr.String())
					require.Equal(t, 5, exit.ExitCode(), "bad configuration; log:\n%s", stderr.String())
				case <-time.After(30 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("%q is still running: it should have exited 5", cmd.Args)
				}
				require.Contains(t, stderr.String(), root+tt.log)
				return
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() }) // a no-op once it has stopped
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			var c *beanstalk.Conn
			for deadline := time.Now().Add(30 * time.Second); c == nil; time.Sleep(20 * time.Millisecond) {
				select {
				case err := <-exited:
					t.Fatalf("%q exited at start: %v; log:\n%s", cmd.Args, err, stderr.String())
				default:
				}
				require.True(t, time.Now().Before(deadline), "%q does not serve on %s", cmd.Args, addr)
				if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
					c = beanstalk.NewConn(conn)
				}
			}
			tt.check(t, c, root)
			_ = c.Close()

			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			select {
			case err := <-exited:
				require.NoError(t, err, "a clean stop; log:\n%s", stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatalf("no stop within 30 s of SIGTERM")
			}
			if tt.log != "" {
				require.Contains(t, stderr.String(), tt.log)
			}
		})
	}
}

// buildBeangate builds the server from this tree and returns the binary's path.
func buildBeangate(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "beangate")
	cmd := exec.Command("go", "build", "-o", binary, "./cmd/beangate")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	return binary
}
