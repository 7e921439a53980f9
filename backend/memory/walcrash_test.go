package memory_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// childServerEnv makes the test binary a beangate server on a binlog directory (-f0, small
// files), so that a test can kill it with SIGKILL.
const childServerEnv = "BEANGATE_TEST_BINLOG_SERVER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childServerEnv); dir != "" {
		serveChild(dir)
		return
	}
	os.Exit(m.Run())
}

func serveChild(dir string) {
	b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: dir, MaxFileSize: 64 << 10,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	fmt.Println("ADDR", ln.Addr().String())
	_ = gateway.NewServer(gateway.Config{Backend: b}).Serve(ln)
}

// startChild runs the child server on dir; with maxFiles > 0, under that many open files.
func startChild(t *testing.T, dir string, maxFiles int) (addr string, kill func(), log *gatewaytest.SyncBuffer) {
	log = &gatewaytest.SyncBuffer{}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if maxFiles > 0 {
		cmd = exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" -test.run='^$'`, maxFiles), os.Args[0])
	}
	cmd.Stderr = log
	cmd.Env = append(os.Environ(), childServerEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	require.True(t, ok, line)
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	return addr, kill, log
}

// Killed with SIGKILL in the middle of puts and deletes from 8 connections under -f0, the
// server loses no acknowledged put and resurrects no acknowledged delete; the preallocated zero
// tail it leaves is read past.
func TestBinlogSurvivesSIGKILLUnderLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addr, kill, _ := startChild(t, dir, 0)
	var (
		mu       sync.Mutex
		put      = map[uint64][]byte{}
		deleted  = map[uint64]bool{}
		inFlight = map[uint64]bool{}
		wg       sync.WaitGroup
	)
	// The kill comes after 300 ms and more than minPuts acknowledged puts: on a loaded machine
	// 300 ms alone may not be enough puts to make the check worth anything.
	const minPuts = 100
	stop := time.Now().Add(300 * time.Millisecond)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer conn.Close()
			r := bufio.NewReader(conn)
			for i := 0; ; i++ {
				body := fmt.Sprintf("w%d-%d\r\nbody", w, i)
				if _, err := fmt.Fprintf(conn, "put 1 0 60 %d\r\n%s\r\n", len(body), body); err != nil {
					return
				}
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				var id uint64
				_, err = fmt.Sscanf(line, "INSERTED %d\r\n", &id)
				require.NoError(t, err, line)
				mu.Lock()
				put[id] = []byte(body)
				mu.Unlock()
				if i%2 == 0 {
					mu.Lock()
					inFlight[id] = true // killed before its reply, a delete may or may not be done
					mu.Unlock()
					if _, err := fmt.Fprintf(conn, "delete %d\r\n", id); err != nil {
						return
					}
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					require.Equal(t, "DELETED\r\n", line)
					mu.Lock()
					deleted[id] = true
					mu.Unlock()
				}
				mu.Lock()
				enough := len(put) > minPuts
				mu.Unlock()
				if enough && time.Now().After(stop) {
					kill() // with commands in flight on the other connections
					return
				}
			}
		}()
	}
	wg.Wait()
	kill()
	mu.Lock()
	defer mu.Unlock()
	require.Greater(t, len(put), minPuts)

	bgAddr, _ := startBeangate(t, binlog.Options{Dir: dir, NoSync: true}, 0)
	c := dialBS(t, bgAddr)
	for id, body := range put {
		got, found := c.peek(id)
		if inFlight[id] && !deleted[id] {
			continue
		}
		if deleted[id] {
			require.False(t, found, "job %d was deleted", id)
			continue
		}
		require.True(t, found, "job %d was acknowledged", id)
		require.Equal(t, body, got)
	}
}

// When the binlog cannot reserve room for a change (here: no file can be created, the process
// being out of descriptors), put answers OUT_OF_MEMORY as beanstalkd does, the log says why,
// stats counts it, and the server keeps serving everything else.
func TestBinlogOutOfRoomAnswersOutOfMemory(t *testing.T) {
	t.Parallel()
	addr, _, log := startChild(t, t.TempDir(), 20)
	c := dialBS(t, addr)
	body := make([]byte, 40<<10) // with 64 KiB files, every put needs a new file
	var first uint64
	for i := 0; ; i++ {
		require.Less(t, i, 100, "never ran out of descriptors")
		reply, _ := c.do(fmt.Sprintf("put 1 0 60 %d", len(body)), body)
		if reply == "OUT_OF_MEMORY" {
			break
		}
		require.Contains(t, reply, "INSERTED", log.String())
		if first == 0 {
			fmt.Sscanf(reply, "INSERTED %d", &first)
		}
	}
	got, found := c.peek(first)
	require.True(t, found, "reads keep working")
	require.Equal(t, body, got)
	require.NotEqual(t, "0", c.stats()["binlog-write-errors"])
	// The child's log reaches us through a pipe, after its reply may have.
	require.Eventually(t, func() bool {
		l := log.String()
		return strings.Contains(l, "cannot preallocate a file") && strings.Contains(l, "too many open files")
	}, 5*time.Second, 10*time.Millisecond, "the log says why: %s", log)
}
