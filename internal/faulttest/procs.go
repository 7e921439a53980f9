package faulttest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"
)

// FreePorts checks that the n loopback ports from base on are free and returns them: a fault
// test binds a fixed block of ports of its own, so that the servers it restarts come back on
// the addresses the gateways know.
func FreePorts(t testing.TB, base, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ports[i] = base + i
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ports[i]))
		if err != nil {
			t.Fatalf("port %d is taken (a server left over from an earlier run?): %v", ports[i], err)
		}
		_ = ln.Close()
	}
	return ports
}

// Addr is 127.0.0.1:port.
func Addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// process is a server run as a child of the test.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	mu   sync.Mutex
	err  error
}

// startProcess starts argv (as given: a runuser prefix included) with its output in logFile.
func startProcess(t testing.TB, name, logFile string, argv ...string) *process {
	t.Helper()
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		backendtest.Unavailable(t, "%s: %v", name, err)
		return nil
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		_ = out.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill sends SIGKILL to the process group and waits for the process to exit.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// signal sends sig to the process group, unless the process has exited.
func (p *process) signal(sig syscall.Signal) {
	if p.running() {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// running reports whether the process has not exited.
func (p *process) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// waitFor polls cond every 20 ms until it holds or d has passed, and reports whether it held.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatal(fmt.Sprintf(format, args...))
}
