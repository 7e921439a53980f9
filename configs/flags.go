package configs

import "github.com/spf13/pflag"

// flagKeys maps each configuration flag to its key (YAML path; env BEANGATE_ + upper-cased key
// with "." as "_").
var flagKeys = map[string]string{
	"listen":           "listen",
	"port":             "port",
	"max-job-size":     "max_job_size",
	"backend":          "backend",
	"verbose":          "verbose",
	"shutdown-timeout": "shutdown_timeout",
	"backend-timeout":  "backend_timeout",
	"compat":           "compat",
	"log-format":       "log.format",
	"log-level":        "log.level",
	"binlog-dir":       "binlog.dir",
	"binlog-fsync-ms":  "binlog.fsync_ms",
	"binlog-no-fsync":  "binlog.no_fsync",
	"binlog-max-size":  "binlog.max_size",
}

// ConfigFlag names the flag holding the YAML file's path (env BEANGATE_CONFIG).
const ConfigFlag = "config"

// AddFlags defines the configuration flags on fs. Every flag has a long name; those beanstalkd
// has also get its single-letter spelling (-l -p -z -V -b -f -F -s), so an existing beanstalkd
// command line keeps working. Defaults shown are those of Defaults().
func AddFlags(fs *pflag.FlagSet) {
	d := Defaults()
	fs.StringP("listen", "l", d.Listen, "listen on `ADDR` (a host or IP), or unix:PATH for a unix socket")
	fs.IntP("port", "p", d.Port, "TCP `PORT` (0: any free port)")
	fs.Int64P("max-job-size", "z", d.MaxJobSize, "largest job body in `BYTES` (at most 1073741824)")
	fs.String("backend", d.Backend, "job store `URL`: memory://, redis://HOST:PORT/DB, postgres://USER@HOST/DB")
	fs.String(ConfigFlag, "", "read settings from the YAML `FILE` (-FILE: only if it exists)")
	fs.CountP("verbose", "V", "more verbose logging (repeatable; -V logs commands)")
	fs.Duration("shutdown-timeout", d.ShutdownTimeout, "graceful stop limit (a `DURATION`) on SIGTERM/SIGINT")
	fs.Duration("backend-timeout", d.BackendTimeout, "limit (a `DURATION`) for each non-blocking backend call")
	fs.String("compat", d.Compat, "answer as beanstalkd `VERSION` 1.13, or 1.12 (unquoted names in stats-tube/stats-job, loose reserve-with-timeout)")
	fs.String("log-format", d.Log.Format, "log `FORMAT`: text or json")
	fs.String("log-level", d.Log.Level, "log `LEVEL`: debug, info, warn or error")
	fs.StringP("binlog-dir", "b", "", "keep jobs in beanstalkd's binlog in `DIR` (memory backend)")
	fs.IntP("binlog-fsync-ms", "f", d.Binlog.FsyncMS, "fsync the binlog at most `MS` ms after a write; 0: before every reply")
	fs.BoolP("binlog-no-fsync", "F", false, "never fsync the binlog")
	fs.Int64P("binlog-max-size", "s", d.Binlog.MaxSize, "binlog file size in `BYTES`")
	addFleetFlags(fs)
}
