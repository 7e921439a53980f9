package configs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
)

// decodeError rewrites what viper's decoding reports (an unknown key as "has invalid keys:
// max_job_sise" under the empty name of the top level, a bad value as "'port' cannot parse
// value as 'int'") so that each problem names where it is: the file and the key's path, or the
// environment variable.
func decodeError(err error, fs *pflag.FlagSet, file string) error {
	var problems []error
	for _, de := range decodeErrors(err) {
		problems = append(problems, placed(de, fs, file))
	}
	if len(problems) == 0 {
		return fmt.Errorf("configuration: %w", err)
	}
	return errors.Join(problems...)
}

// decodeErrors are the *mapstructure.DecodeError leaves of err's tree.
func decodeErrors(err error) []*mapstructure.DecodeError {
	if de, ok := err.(*mapstructure.DecodeError); ok {
		var inner *mapstructure.DecodeError
		if !errors.As(de.Unwrap(), &inner) {
			return []*mapstructure.DecodeError{de}
		}
	}
	var out []*mapstructure.DecodeError
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, decodeErrors(e)...)
		}
	case interface{ Unwrap() error }:
		out = decodeErrors(u.Unwrap())
	}
	return out
}

// placed is one decoding problem, said where it is.
func placed(de *mapstructure.DecodeError, fs *pflag.FlagSet, file string) error {
	name := de.Name()
	if keys, ok := strings.CutPrefix(de.Unwrap().Error(), "has invalid keys: "); ok {
		// Unknown keys come from the file: flags and variables only ever set known ones.
		var paths []string
		for _, key := range strings.Split(keys, ", ") {
			if name != "" {
				key = name + "." + key
			}
			paths = append(paths, key+didYouMean(key, append(flaggedKeys(), "policies", "schedules")))
		}
		return fmt.Errorf("config file %s: unknown key %s", file, strings.Join(paths, ", "))
	}
	if env := envName(name); slices.Contains(envNames(), env) {
		if _, set := lookupEnv(env); set && !flagChanged(fs, name) {
			return fmt.Errorf("%s: %w", env, de.Unwrap())
		}
	}
	return fmt.Errorf("config file %s: %s: %w", file, name, de.Unwrap())
}

// flaggedKeys are the keys that have a flag, and so a variable.
func flaggedKeys() []string {
	var keys []string
	for _, m := range []map[string]string{flagKeys, fleetFlagKeys} {
		for _, key := range m {
			keys = append(keys, key)
		}
	}
	return keys
}

// flagChanged reports whether key's flag was given on the command line.
func flagChanged(fs *pflag.FlagSet, key string) bool {
	for _, m := range []map[string]string{flagKeys, fleetFlagKeys} {
		for flag, k := range m {
			if k == key {
				f := fs.Lookup(flag)
				return f != nil && f.Changed
			}
		}
	}
	return false
}
