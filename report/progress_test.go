package report

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
)

// lockedBuffer is a bytes.Buffer safe for the watcher's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestDescribeActivity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		acts []execution.Activity
		want string
	}{
		{"nothing", nil, ""},
		{"calls in flight on two routes", []execution.Activity{
			{Item: 0, Route: "primary", Since: 110 * time.Second, Deadline: 2 * time.Minute},
			{Item: 1, Route: "primary", Since: 40 * time.Second, Deadline: 2 * time.Minute},
			{Item: 2, Route: "fallback", Since: 5 * time.Second, Deadline: 90 * time.Second},
		}, "in flight: primary 2 (longest 1m50s of its 2m0s deadline), fallback 1 (longest 5s of its 1m30s deadline)"},
		{"waiting, by route and cause", []execution.Activity{
			{Item: 0, Route: "litellm", Since: 4 * time.Minute, Deadline: 5 * time.Minute},
			{Item: 1, Route: "litellm", Waiting: execution.WaitBreaker, Since: time.Minute},
			{Item: 2, Route: "litellm", Waiting: execution.WaitBreaker, Since: 2 * time.Minute},
			{Item: 3, Route: "litellm", Waiting: execution.WaitBackoff, Since: 10 * time.Second},
		}, "in flight: litellm 1 (longest 4m0s of its 5m0s deadline); waiting: litellm 2 (breaker), litellm 1 (backoff)"},
	}
	for _, tt := range tests {
		if got := DescribeActivity(tt.acts); got != tt.want {
			t.Errorf("%s: DescribeActivity() = %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// While nothing finishes, a terminal is told at least every 10 s what is
// in flight and for how long, the Action log every minute, and a pipe
// without -v nothing at all.
func TestProgressWhileWaiting(t *testing.T) {
	t.Parallel()
	activity := func() []execution.Activity {
		return []execution.Activity{{Route: "primary", Since: 25 * time.Second, Deadline: 2 * time.Minute}}
	}
	const waiting = "in flight: primary 1 (longest 25s of its 2m0s deadline)"
	tests := []struct {
		name string
		mode ProgressMode
		want []string // the lines written over 2m30s, as a reader sees them
	}{
		{"terminal", ProgressTerminal, []string{
			"warden: 0/4 items done, 10s; " + waiting,
			"warden: 0/4 items done, 20s; " + waiting,
		}},
		{"log", ProgressLog, []string{
			"warden: 0/4 items done, 1m0s; " + waiting,
			"warden: 0/4 items done, 2m0s; " + waiting,
		}},
		{"quiet", ProgressQuiet, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var out lockedBuffer
				p := NewProgress(&out, tt.mode, 4)
				stop := p.Watch(activity)
				time.Sleep(150 * time.Second)
				stop()
				p.Finish()
				var got []string
				for _, l := range strings.FieldsFunc(out.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
					got = append(got, strings.TrimSuffix(l, "\x1b[K"))
				}
				if tt.mode == ProgressTerminal {
					if n := len(got); n != 15 { // every 10 s for 150 s
						t.Errorf("%d terminal refreshes in 2m30s, want 15 (every 10 s)", n)
					}
					got = got[:min(2, len(got))]
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("progress (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// Items done: a terminal line per item, rewritten in place; a log line per
// tenth of the items; the finished line says nothing is in flight.
func TestProgressItemsDone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var term, log lockedBuffer
		pt, pl := NewProgress(&term, ProgressTerminal, 20), NewProgress(&log, ProgressLog, 20)
		for i := 1; i <= 20; i++ {
			time.Sleep(time.Second)
			pt.Update(i, 20)
			pl.Update(i, 20)
		}
		pt.Finish()
		if got := strings.Count(term.String(), "\r"); got != 20 {
			t.Errorf("%d terminal rewrites, want 20", got)
		}
		if !strings.HasSuffix(term.String(), "\rwarden: 20/20 items done, 20s\x1b[K\n") {
			t.Errorf("terminal ends %q, want the last line and a newline", term.String()[max(0, len(term.String())-60):])
		}
		want := "warden: 2/20 items done, 2s\n"
		if lines := strings.Split(strings.TrimSpace(log.String()), "\n"); len(lines) != 10 || lines[0]+"\n" != want {
			t.Errorf("log lines %q, want 10 (one per tenth), the first %q", lines, want)
		}
	})
}

func TestProgressModeFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		terminal, verbose, actionLog bool
		want                         ProgressMode
	}{
		{true, false, false, ProgressTerminal},
		{true, true, true, ProgressTerminal},
		{false, false, true, ProgressLog},
		{false, true, false, ProgressLog},
		{false, false, false, ProgressQuiet},
	}
	for _, tt := range tests {
		if got := ProgressModeFor(tt.terminal, tt.verbose, tt.actionLog); got != tt.want {
			t.Errorf("ProgressModeFor(terminal %v, -v %v, Action %v) = %v, want %v", tt.terminal, tt.verbose, tt.actionLog, got, tt.want)
		}
	}
}
