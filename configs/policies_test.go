package configs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The policies: section as docs/policies.md spells it.
func TestLoadPolicies(t *testing.T) {
	isolateEnv(t)
	file := writeFile(t, `
policies:
  - tube: "email-*"        # a name or a glob; the most specific match wins
    max_reserves: 5
    expire_after: 1h
    expire_action: bury    # or delete (the default)
    max_reserved: 3
    rate: 50               # reserves per second, fleet-wide
    burst: 10
    unique: true
    retry_delay: 1s        # a job that comes back waits 1s, 2s, 4s … before it is ready again
    retry_delay_max: 10m
    history: true
  - tube: billing
    rate: 0.5
  - tube: email-vip
`)
	cfg, _, err := Load(parsedFlags(t, "--config", file))
	require.NoError(t, err)
	require.Equal(t, []Policy{
		{Tube: "email-*", MaxReserves: 5, ExpireAfter: time.Hour, ExpireAction: "bury", MaxReserved: 3, Rate: 50, Burst: 10, Unique: true,
			RetryDelay: time.Second, RetryMax: 10 * time.Minute, History: true},
		{Tube: "billing", Rate: 0.5},
		{Tube: "email-vip"},
	}, cfg.Policies)
}

func TestLoadRejectsBadPolicies(t *testing.T) {
	for name, tt := range map[string]struct{ yaml, wantErr string }{
		"UnknownKey":        {"policies:\n  - tube: a\n    max_retries: 3\n", "max_retries"},
		"NoTube":            {"policies:\n  - rate: 3\n", "policies[0]: backend: bad policy: tube must be"},
		"BadAction":         {"policies:\n  - tube: a\n    expire_after: 1m\n    expire_action: archive\n", `policies[0]: backend: bad policy: expire-action "archive"`},
		"ActionWithoutTime": {"policies:\n  - tube: a\n    expire_action: bury\n", "expire-action without expire-after"},
		"BurstWithoutRate":  {"policies:\n  - tube: a\n    burst: 3\n", "burst without rate"},
		"RetryMaxAlone":     {"policies:\n  - tube: a\n    retry_delay_max: 1m\n", "retry-delay-max without retry-delay"},
		"RetryMaxBelow":     {"policies:\n  - tube: a\n    retry_delay: 1m\n    retry_delay_max: 1s\n", "retry-delay-max 1s is below retry-delay 1m0s"},
		"BadDuration":       {"policies:\n  - tube: a\n    expire_after: soon\n", "expire_after"},
		"Twice":             {"policies:\n  - tube: a\n    unique: true\n  - tube: a\n    rate: 1\n", `policies[1]: tube "a" appears twice`},
		"NegativeCount":     {"policies:\n  - tube: a\n    max_reserves: -1\n", "max_reserves"},
	} {
		t.Run(name, func(t *testing.T) {
			isolateEnv(t)
			_, _, err := Load(parsedFlags(t, "--config", writeFile(t, tt.yaml)))
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
