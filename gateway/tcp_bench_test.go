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

// BenchmarkTCPCycle is one job's life through the whole server over loopback TCP, memory
// backend: put and reserve-with-timeout 0 in one write, then delete. It includes the socket
// round trips, which are most of the cost; bench/run.sh compares the same with beanstalkd.
func BenchmarkTCPCycle(b *testing.B) {
	addr, _ := gatewaytest.StartServer(b, newMemoryTB(b), gateway.Config{})
	c := dialBench(b, addr)
	put := "put 1024 0 60 100\r\n" + strings.Repeat("x", 100) + "\r\nreserve-with-timeout 0\r\n"
	b.ReportAllocs()
	for b.Loop() {
		c.send(put)
		c.takeAndDelete(c.inserted())
	}
}

// BenchmarkTCPWakeWaitingReserve is one job handed to a worker whose reserve waits, over
// loopback TCP, memory backend: the worker's reserve starts waiting, a producer puts, the
// worker gets RESERVED and deletes the job. It measures the wake-up path that waiting workers
// feel.
func BenchmarkTCPWakeWaitingReserve(b *testing.B) {
	addr, srv := gatewaytest.StartServer(b, newMemoryTB(b), gateway.Config{})
	worker, producer := dialBench(b, addr), dialBench(b, addr)
	put := "put 1024 0 60 100\r\n" + strings.Repeat("x", 100) + "\r\n"
	b.ReportAllocs()
	for b.Loop() {
		worker.send("reserve\r\n")
		for srv.TubeWaiting("default") == 0 {
			runtime.Gosched()
		}
		producer.send(put)
		worker.takeAndDelete(producer.inserted())
	}
}

// benchConn is a benchmark's client connection.
type benchConn struct {
	b  *testing.B
	nc net.Conn
	r  *bufio.Reader
}

func dialBench(b *testing.B, addr string) *benchConn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = nc.Close() })
	return &benchConn{b: b, nc: nc, r: bufio.NewReader(nc)}
}

func (c *benchConn) send(s string) {
	if _, err := io.WriteString(c.nc, s); err != nil {
		c.b.Fatal(err)
	}
}

func (c *benchConn) readLine() string {
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.b.Fatal(err)
	}
	return line
}

// inserted reads a put's INSERTED and returns the job's id.
func (c *benchConn) inserted() uint64 {
	var id uint64
	if _, err := fmt.Sscanf(c.readLine(), "INSERTED %d\r\n", &id); err != nil {
		c.b.Fatal(err)
	}
	return id
}

// takeAndDelete reads the RESERVED of job id, with its 100-byte body, and deletes the job.
func (c *benchConn) takeAndDelete(id uint64) {
	var got uint64
	if _, err := fmt.Sscanf(c.readLine(), "RESERVED %d 100\r\n", &got); err != nil || got != id {
		c.b.Fatalf("reserved %d after inserting %d: %v", got, id, err)
	}
	c.readLine() // the body
	c.send(fmt.Sprintf("delete %d\r\n", id))
	if line := c.readLine(); line != "DELETED\r\n" {
		c.b.Fatalf("delete: %q", line)
	}
}
