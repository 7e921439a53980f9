package main

import (
	"fmt"
	"log/slog"

	"github.com/beangate/beangate/configs"
)

// configure parses args and opens the logger, logging the warnings parsing produced; with stop
// set the caller exits with exit at once.
func (p process) configure(args []string) (cfg configs.Config, log *slog.Logger, exit int, stop bool) {
	cfg, warnings, exit, stop := p.parseArgs(args)
	if stop {
		return cfg, nil, exit, true
	}
	log = newLogger(cfg, p.stderr)
	for _, w := range warnings {
		log.Warn(w)
	}
	return cfg, log, 0, false
}

// parseArgs turns the command line into a validated Config. When the process must not go on
// (help, version, a usage or configuration error) it has already printed why, and stop is true
// with the exit status to use. warnings are for the caller to log once it has a logger.
func (p process) parseArgs(args []string) (cfg configs.Config, warnings []string, exit int, stop bool) {
	fs := newFlagSet()
	usageError := func(format string, a ...any) (configs.Config, []string, int, bool) {
		help := p.help
		if help == "" {
			help = "beangate --help"
		}
		fmt.Fprintf(p.stderr, "beangate: "+format+"\n", a...)
		fmt.Fprintf(p.stderr, "Try '%s' for more information.\n", help)
		return configs.Config{}, nil, exitUsage, true
	}
	if err := fs.Parse(args); err != nil {
		return usageError("%v", err)
	}
	if fs.NArg() > 0 {
		return usageError("unknown argument: %s", fs.Arg(0))
	}
	if on, _ := fs.GetBool("help"); on {
		printUsage(p.stdout, fs)
		return configs.Config{}, nil, exitOK, true
	}
	if on, _ := fs.GetBool("version"); on {
		fmt.Fprint(p.stdout, versionText())
		return configs.Config{}, nil, exitOK, true
	}
	if fs.Changed("user") {
		fmt.Fprintln(p.stderr, "beangate: -u/--user is not supported: start beangate as the user it should run as (User= in a systemd unit)")
		return configs.Config{}, nil, exitUsage, true
	}
	for _, name := range []string{"removed-c", "removed-n"} {
		if fs.Changed(name) {
			warnings = append(warnings, fmt.Sprintf("-%s flag was removed; ignored", fs.Lookup(name).Shorthand))
		}
	}
	cfg, loadWarnings, err := configs.Load(fs)
	if err != nil {
		fmt.Fprintf(p.stderr, "beangate: %v\n", err)
		return configs.Config{}, nil, exitUsage, true
	}
	return cfg, append(warnings, loadWarnings...), exitOK, false
}
