package gateway_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// BenchmarkTCPCycle is one job's life through the whole server over loopback TCP, memory
// backend: put and reserve-with-timeout 0 in one write, then delete. It includes the socket
// round trips, which are most of the cost; bench/run.sh compares the same with beanstalkd.
func BenchmarkTCPCycle(b *testing.B) {
	addr, _ := gatewaytest.StartServer(b, newMemoryTB(b), gateway.Config{})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	put := []byte("put 1024 0 60 100\r\n" + strings.Repeat("x", 100) + "\r\nreserve-with-timeout 0\r\n")
	readLine := func() string {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nc.Write(put); err != nil {
			b.Fatal(err)
		}
		var id uint64
		if _, err := fmt.Sscanf(readLine(), "INSERTED %d\r\n", &id); err != nil {
			b.Fatal(err)
		}
		var got uint64
		if _, err := fmt.Sscanf(readLine(), "RESERVED %d 100\r\n", &got); err != nil || got != id {
			b.Fatalf("reserved %d after inserting %d: %v", got, id, err)
		}
		readLine() // the body
		if _, err := fmt.Fprintf(nc, "delete %d\r\n", id); err != nil {
			b.Fatal(err)
		}
		if line := readLine(); line != "DELETED\r\n" {
			b.Fatalf("delete: %q", line)
		}
	}
}
