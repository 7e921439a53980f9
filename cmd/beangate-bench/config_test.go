package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTargets(t *testing.T) {
	tests := []struct {
		name    string
		servers string
		pids    string
		want    []target
		wantErr bool
	}{
		{"named servers in order", "beanstalkd=127.0.0.1:1,beangate=127.0.0.1:2", "",
			[]target{{Name: "beanstalkd", Addr: "127.0.0.1:1"}, {Name: "beangate", Addr: "127.0.0.1:2"}}, false},
		{"a bare address names itself", "127.0.0.1:1", "",
			[]target{{Name: "127.0.0.1:1", Addr: "127.0.0.1:1"}}, false},
		{"pids by name", "a=h:1,b=h:2", "b=42",
			[]target{{Name: "a", Addr: "h:1"}, {Name: "b", Addr: "h:2", PID: 42}}, false},
		{"two gateways of one store", "redis=h:1+h:2", "",
			[]target{{Name: "redis", Addr: "h:1+h:2"}}, false},
		{"three gateways", "redis=h:1+h:2+h:3", "", nil, true},
		{"an empty gateway", "redis=h:1+", "", nil, true},
		{"no servers", "", "", nil, true},
		{"repeated name", "a=h:1,a=h:2", "", nil, true},
		{"empty address", "a=", "", nil, true},
		{"pid for an unknown server", "a=h:1", "z=42", nil, true},
		{"pid not a number", "a=h:1", "a=x", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTargets(tt.servers, tt.pids)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestTargetAddresses(t *testing.T) {
	tests := []struct {
		addr, primary, consumer string
	}{
		{"h:1", "h:1", "h:1"},
		{"h:1+h:2", "h:1", "h:2"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			tg := target{Name: "x", Addr: tt.addr}
			require.Equal(t, tt.primary, tg.primary())
			require.Equal(t, tt.consumer, tg.consumer())
		})
	}
}

func TestParseConfigValidates(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"defaults", []string{"-servers", "a=h:1"}, false},
		{"unknown scenario", []string{"-servers", "a=h:1", "-scenario", "nope"}, true},
		{"zero conns", []string{"-servers", "a=h:1", "-conns", "0"}, true},
		{"body over the max job size", []string{"-servers", "a=h:1", "-body", "65536"}, true},
		{"stray argument", []string{"-servers", "a=h:1", "extra"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(tt.args, discard{})
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestDrainPreloadsJobsByDefault(t *testing.T) {
	cfg, err := parseConfig([]string{"-servers", "a=h:1", "-scenario", "drain"}, discard{})
	require.NoError(t, err)
	require.Equal(t, 50000, cfg.opts.Jobs)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestParseStores(t *testing.T) {
	tests := []struct {
		name    string
		stores  string
		want    []string
		wantErr bool
	}{
		{"none", "", []string{"", ""}, false},
		{"one store by name", "b=redis://127.0.0.1:6379/0", []string{"", "redis://127.0.0.1:6379/0"}, false},
		{"both", "a=postgres://h/test?sslmode=disable, b=redis://h", []string{"postgres://h/test?sslmode=disable", "redis://h"}, false},
		{"unknown name", "z=redis://h", nil, true},
		{"no url", "a=", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			targets := []target{{Name: "a", Addr: "h:1"}, {Name: "b", Addr: "h:2"}}
			err := parseStores(targets, tt.stores)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, []string{targets[0].Store, targets[1].Store})
		})
	}
}
