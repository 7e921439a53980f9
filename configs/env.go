package configs

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// envName is the environment variable for key: BEANGATE_ and the key upper-cased, "." as "_".
func envName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// envNames are the variables Load reads: one per configuration flag, and BEANGATE_CONFIG.
func envNames() []string {
	names := []string{EnvPrefix + "_CONFIG"}
	for _, key := range flaggedKeys() {
		names = append(names, envName(key))
	}
	slices.Sort(names)
	return names
}

// envOthers are BEANGATE_ variables that are not the server's settings: `beangate ctl`'s, and
// those of the tests, benchmarks and CI scripts, which may be set in an environment that starts
// a server too.
var envOthers = []string{
	"BEANGATE_CTL_", "BEANGATE_TEST_", "BEANGATE_TIMED_", "BEANGATE_LUACOST", "BEANGATE_SCALE",
	"BEANGATE_REFERENCE_BEANSTALKD", "BEANGATE_ARTIFACTS", "BEANGATE_REDIS_URL", "BEANGATE_PG_URL",
}

// checkEnv refuses a set BEANGATE_ variable that is no setting, naming the closest one: a
// misspelt variable would otherwise be ignored without a word (empty ones are ignored, as
// empty settings are).
func checkEnv(environ []string) error {
	known := envNames()
	var unknown []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix+"_") || value == "" || slices.Contains(known, name) ||
			slices.ContainsFunc(envOthers, func(other string) bool { return strings.HasPrefix(name, other) }) {
			continue
		}
		unknown = append(unknown, name+" is not a setting"+didYouMean(name, known))
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("environment: %s", strings.Join(unknown, "; "))
}

// didYouMean is " (did you mean X?)" for the known name closest to name, if it is close: a
// few edits apart, after the shared prefix.
func didYouMean(name string, known []string) string {
	short := strings.TrimPrefix(name, EnvPrefix+"_")
	best, bestDist := "", max(2, len(short)/3)+1
	for _, k := range known {
		if d := editDistance(short, strings.TrimPrefix(k, EnvPrefix+"_")); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance between a and b, counting bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lookupEnv is os.LookupEnv counting an empty value as unset, as viper does.
func lookupEnv(name string) (string, bool) {
	v := os.Getenv(name)
	return v, v != ""
}
