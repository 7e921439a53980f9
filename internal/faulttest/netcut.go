package faulttest

import (
	"fmt"
	"os/exec"
	"strconv"
	"testing"

	"github.com/beangate/beangate/backend/backendtest"
)

// CutHost is the loopback address a gateway dials to have its path to a store cut by a NetCut,
// while others dial 127.0.0.1 and keep theirs. The private servers here listen on both.
const CutHost = "127.0.0.2"

// NetCut silently drops every packet between CutHost and a port on loopback (nftables, in a
// table of its own): connections neither fail nor get refused, they just stop hearing back, as
// across a network partition. It needs root and the nft command.
type NetCut struct {
	t     testing.TB
	table string
	port  int
	on    bool
}

// NewNetCut prepares a cut of the path to CutHost:port; it is healed when the test ends.
func NewNetCut(t testing.TB, port int) *NetCut {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		backendtest.Unavailable(t, "nft (nftables) for a silent network cut: %v", err)
		return nil
	}
	c := &NetCut{t: t, table: "beangate_cut_" + strconv.Itoa(port), port: port}
	_ = exec.Command("nft", "delete", "table", "inet", c.table).Run() // left over from a killed run
	t.Cleanup(func() {
		if c.on {
			_ = exec.Command("nft", "delete", "table", "inet", c.table).Run()
		}
	})
	return c
}

// Cut starts dropping the packets.
func (c *NetCut) Cut() {
	c.t.Helper()
	p := strconv.Itoa(c.port)
	for _, args := range [][]string{
		{"add", "table", "inet", c.table},
		{"add", "chain", "inet", c.table, "output", "{ type filter hook output priority 0; policy accept; }"},
		{"add", "rule", "inet", c.table, "output", "ip", "daddr", CutHost, "tcp", "dport", p, "drop"},
		{"add", "rule", "inet", c.table, "output", "ip", "saddr", CutHost, "tcp", "sport", p, "drop"},
	} {
		if out, err := exec.Command("nft", args...).CombinedOutput(); err != nil {
			backendtest.Unavailable(c.t, "nft %v: %v\n%s", args, err, out)
		}
	}
	c.on = true
}

// Heal lets the packets through again; connections that were waiting carry on.
func (c *NetCut) Heal() {
	c.t.Helper()
	if out, err := exec.Command("nft", "delete", "table", "inet", c.table).CombinedOutput(); err != nil {
		c.t.Fatalf("nft delete table %s: %v\n%s", c.table, err, out)
	}
	c.on = false
}

func (c *NetCut) String() string { return fmt.Sprintf("%s:%d", CutHost, c.port) }
