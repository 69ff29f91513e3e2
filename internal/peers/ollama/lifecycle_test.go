package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanEnv, set to a scratch directory, makes the test binary the helper
// of TestServerDiesWithTestProcess instead of running tests.
const orphanEnv = "WARDEN_OLLAMA_ORPHAN_DIR"

// orphan is that helper: it starts a server in dir, loads the tiny model
// (so that the server starts a runner process), prints the server's pid
// and how many processes its group holds, and dies as go test's -timeout
// kills a test binary: a panic on another goroutine, which runs no
// deferred call and closes no server.
func orphan(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	s, err := Start(ctx, Config{Binary: peer.bin, Dir: dir, Env: []string{"PATH=" + peer.path}})
	if err != nil {
		return fail(err)
	}
	var gguf bytes.Buffer
	if err := WriteTinyModel(&gguf, 42); err != nil {
		return fail(err)
	}
	if err := s.CreateModel(ctx, Model{Name: tinyModel, GGUF: gguf.Bytes(), Template: tinyTemplate, Parameters: tinyParams}); err != nil {
		return fail(err)
	}
	// Server API docs: https://github.com/ollama/ollama/blob/v0.6.5/docs/api.md#load-a-model
	body, _ := json.Marshal(map[string]any{"model": tinyModel, "stream": false})
	if status, b, err := s.post(ctx, "/api/generate", "application/json", body); err != nil || status != 200 {
		return fail(fmt.Errorf("load the model: %d %s %v", status, b, err))
	}
	pid := s.cmd.Process.Pid
	fmt.Printf("server %d group %d\n", pid, len(group(pid)))
	go panic("helper: test timed out (as go test's alarm panics)")
	select {}
}

// group lists the live processes (not zombies) of process group pgid, as
// /proc shows them.
func group(pgid int) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		out = append(out, s[:i+1])
	}
	return out
}

// TestServerDiesWithTestProcess: a server, and the runner it started, end
// with the test process that started them however it ends: here a copy of
// this binary that starts them and dies of a panic that runs no deferred
// call (go test's -timeout kills a test binary so). The kernel's
// parent-death signal (procAttr) sends the server SIGTERM, on which it
// stops its runner and exits.
func TestServerDiesWithTestProcess(t *testing.T) {
	t.Parallel()
	mainServer(t) // skips or fails as the tier does without its binary
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil || !strings.Contains(stderr.String(), "helper: test timed out") {
		t.Fatalf("the helper did not die of its panic: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var pid, n int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fmt.Sscanf(sc.Text(), "server %d group %d", &pid, &n)
	}
	if pid == 0 || n < 2 {
		t.Fatalf("the helper said %q, want a server pid and a group of at least 2 (the server and its runner)", out)
	}
	// The processes are real: give them real time to exit (SIGTERM, then
	// the server unloads its runner), polling /proc.
	deadline := time.Now().Add(30 * time.Second)
	for left := group(pid); len(left) > 0; left = group(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // this test's own processes: leave none behind
			t.Fatalf("30 s after the test process died, its ollama server's group still runs: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
