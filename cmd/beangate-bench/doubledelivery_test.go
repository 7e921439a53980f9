package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// startDoublingServer is a broken beanstalk server that accepts every put and answers every
// reserve with the same job id 1: the fault the exactly-once checker exists to catch.
func startDoublingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var nextID atomic.Uint64
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go serveDoubling(nc, &nextID)
		}
	}()
	return ln.Addr().String()
}

func serveDoubling(nc net.Conn, nextID *atomic.Uint64) {
	defer nc.Close()
	r, w := bufio.NewReader(nc), bufio.NewWriter(nc)
	watching := 1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		fields := strings.Fields(line)
		switch {
		case fields[0] == "use":
			fmt.Fprintf(w, "USING %s\r\n", fields[1])
		case fields[0] == "watch":
			watching++
			fmt.Fprintf(w, "WATCHING %d\r\n", watching)
		case fields[0] == "ignore":
			watching--
			fmt.Fprintf(w, "WATCHING %d\r\n", watching)
		case fields[0] == "put":
			size, _ := strconv.Atoi(fields[4])
			if _, err := io.CopyN(io.Discard, r, int64(size+2)); err != nil {
				return
			}
			fmt.Fprintf(w, "INSERTED %d\r\n", nextID.Add(1))
		case fields[0] == "reserve":
			fmt.Fprintf(w, "RESERVED 1 3\r\nabc\r\n")
		case fields[0] == "delete":
			fmt.Fprintf(w, "DELETED\r\n")
		default:
			fmt.Fprintf(w, "UNKNOWN_COMMAND\r\n")
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

func TestADoubleDeliveryFailsTheRunWithExitStatus1(t *testing.T) {
	addr := startDoublingServer(t)
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer stderr.Close()

	status := run([]string{"-servers", "broken=" + addr, "-scenario", "cycle", "-conns", "4",
		"-duration", "100ms", "-rounds", "1"}, io.Discard, stderr)

	require.Equal(t, 1, status)
	out, err := os.ReadFile(stderr.Name())
	require.NoError(t, err)
	require.Contains(t, string(out), "job 1 delivered 2 times")
}
