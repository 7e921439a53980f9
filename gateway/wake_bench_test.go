package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// BenchmarkTCPWakeWaitingReserve is one job handed to a worker whose reserve waits, over
// loopback TCP, memory backend: the worker's reserve starts waiting, a producer puts, the
// worker gets RESERVED and deletes the job. It measures the wake-up path that waiting workers
// feel.
func BenchmarkTCPWakeWaitingReserve(b *testing.B) {
	addr, srv := gatewaytest.StartServer(b, newMemoryTB(b), gateway.Config{})
	dial := func() (net.Conn, *bufio.Reader) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = nc.Close() })
		return nc, bufio.NewReader(nc)
	}
	worker, wr := dial()
	producer, pr := dial()
	put := []byte("put 1024 0 60 100\r\n" + strings.Repeat("x", 100) + "\r\n")
	readLine := func(r *bufio.Reader) string {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.WriteString(worker, "reserve\r\n"); err != nil {
			b.Fatal(err)
		}
		for srv.TubeWaiting("default") == 0 {
			runtime.Gosched()
		}
		if _, err := producer.Write(put); err != nil {
			b.Fatal(err)
		}
		var id uint64
		if _, err := fmt.Sscanf(readLine(pr), "INSERTED %d\r\n", &id); err != nil {
			b.Fatal(err)
		}
		var got uint64
		if _, err := fmt.Sscanf(readLine(wr), "RESERVED %d 100\r\n", &got); err != nil || got != id {
			b.Fatalf("reserved %d after inserting %d: %v", got, id, err)
		}
		readLine(wr) // the body
		if _, err := fmt.Fprintf(worker, "delete %d\r\n", id); err != nil {
			b.Fatal(err)
		}
		if line := readLine(wr); line != "DELETED\r\n" {
			b.Fatalf("delete: %q", line)
		}
	}
}
