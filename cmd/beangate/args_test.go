package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/cmd/beangate/ctl"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// runArgs runs the command line without serving; every case here stops before binding.
func runArgs(t *testing.T, args ...string) (exit int, stdout, stderr string) {
	t.Helper()
	// Safe for concurrent writes: go-redis keeps one logger per process (backend/redis routes it
	// to the run's), and a dial it had queued when the store was closed logs its failure later.
	var out, errOut gatewaytest.SyncBuffer
	exit = run(context.Background(), args, &out, &errOut)
	return exit, out.String(), errOut.String()
}

func TestVersionPrintsAndExitsZero(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"-v", "--version"} {
		exit, stdout, stderr := runArgs(t, flag)
		require.Equal(t, exitOK, exit)
		// go test records no VCS information: the second line says so (the image test in deploy/
		// checks a real build's commit and date).
		require.Regexp(t, regexp.MustCompile(`^beangate \S+ \(beanstalkd 1\.13 protocol\)\n`+
			`commit unknown, commit date unknown, go\S+ \w+/\w+\n$`), stdout)
		require.Empty(t, stderr)
	}
}

func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	t.Parallel()
	exit, stdout, _ := runArgs(t, "-h")
	require.Equal(t, exitOK, exit)
	require.Contains(t, stdout, "Usage: beangate [OPTIONS]")
	// Each flag with its argument's name, as pflag takes it from the usage's first `NAME`.
	for _, want := range []string{"-l, --listen ADDR", "-b, --binlog-dir DIR", "--http ADDR",
		"--tls-cert FILE", "--tls-client-ca FILE", "--auth-token-file FILE", "--metrics-max-tubes N"} {
		require.Contains(t, stdout, want)
	}
	require.NotContains(t, stdout, "removed-c", "the removed flags stay out of the help")
	for _, command := range []string{"migrate-db", "binlog inspect", "binlog compact", "migrate", "ctl", "healthcheck"} {
		require.Contains(t, stdout, "  beangate "+command+" ", "every command is listed")
	}
	// ctl's line names each of ctl's commands.
	_, ctlLine, _ := strings.Cut(stdout, "  beangate ctl ")
	ctlLine, _, _ = strings.Cut(ctlLine, "  beangate healthcheck")
	ctlLine = strings.Join(strings.Fields(ctlLine), " ")
	for _, name := range append(ctl.CommandNames(), "policy", "hash-password") {
		require.Regexp(t, `[ :]`+name+`[,) ]`, ctlLine)
	}
}

func TestBadCommandLineIsUsageExitFive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"UnknownShortFlag", []string{"-x"}, "unknown shorthand flag: 'x'"},
		{"UnknownLongFlag", []string{"--nope"}, "unknown flag: --nope"},
		{"StrayArgument", []string{"-p", "11300", "extra"}, "unknown argument: extra"},
		{"UnknownCommand", []string{"frobnicate"}, "unknown argument: frobnicate"},
		{"MissingFlagArgument", []string{"-p"}, "flag needs an argument: 'p' in -p"},
		{"NonNumericMaxJobSize", []string{"-z", "big"}, `invalid argument "big"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exit, stdout, stderr := runArgs(t, tt.args...)
			require.Equal(t, exitUsage, exit)
			require.Empty(t, stdout)
			// One line and where to look, not the whole usage.
			require.Regexp(t, `^beangate: [^\n]*`+regexp.QuoteMeta(tt.wantErr)+`[^\n]*\nTry 'beangate --help' for more information.\n$`, stderr)
		})
	}
}

// A mistyped BEANGATE_ variable stops the start (exit 5), naming the closest setting; a
// variable of beangate ctl or of the tests does not.
func TestUnknownEnvironmentVariableIsBadConfiguration(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"Misspelt", map[string]string{"BEANGATE_BACKEN": "redis://127.0.0.1:6379/0"},
			"beangate: environment: BEANGATE_BACKEN is not a setting (did you mean BEANGATE_BACKEND?)\n"},
		{"BadValue", map[string]string{"BEANGATE_PORT": "big"},
			"beangate: BEANGATE_PORT: cannot parse value as 'int': strconv.ParseInt: invalid syntax\n"},
		// Past the environment: the -z 0 below is what stops it.
		{"OthersIgnored", map[string]string{"BEANGATE_CTL_ADDR": "h:1", "BEANGATE_TEST_IMAGE": "beangate:dev"},
			"beangate: max_job_size 0: must be at least 1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			exit, _, stderr := runArgs(t, "-z", "0") // never serves
			require.Equal(t, exitUsage, exit, stderr)
			require.Equal(t, tt.wantErr, stderr)
		})
	}
}

func TestUnsupportedFlagsFailClearly(t *testing.T) {
	t.Parallel()
	const binlog = "the binlog belongs to the memory backend (Redis and PostgreSQL keep jobs durable in their store)"
	redis := []string{"--backend", "redis://127.0.0.1:6379/0"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"BinlogDir", append(redis, "-b", "/var/lib/beanstalkd"), "-b/--binlog-dir: " + binlog},
		{"FsyncEvery", append(redis, "-f0"), "-f/--binlog-fsync-ms: " + binlog},
		{"FsyncMS", append(redis, "-f", "50"), "-f/--binlog-fsync-ms: " + binlog},
		{"NeverFsync", append(redis, "-F"), "-F/--binlog-no-fsync: " + binlog},
		{"BinlogSize", append(redis, "-s", "1000"), "-s/--binlog-max-size: " + binlog},
		{"User", []string{"-u", "beanstalkd"}, "-u/--user is not supported"},
		{"InvalidValue", []string{"-z", "0"}, "max_job_size 0: must be at least 1"},
		{"UnknownBackend", []string{"--backend", "mysql://h/db"}, `backend: unknown scheme "mysql"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exit, _, stderr := runArgs(t, tt.args...)
			require.Equal(t, exitUsage, exit)
			require.Contains(t, stderr, "beangate: "+tt.wantErr)
		})
	}
}

func TestSubcommandIsDispatchedByName(t *testing.T) {
	t.Parallel()
	var got []string
	p := process{stdout: io.Discard, stderr: io.Discard, commands: map[string]command{
		"migrate-db": func(_ context.Context, _ process, args []string) int { got = args; return 42 },
	}}
	require.Equal(t, 42, p.run(context.Background(), []string{"migrate-db", "--backend", "postgres://h/db"}))
	require.Equal(t, []string{"--backend", "postgres://h/db"}, got)
}
