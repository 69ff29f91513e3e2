package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/org/warden/execution"
)

// ProgressMode says how a review's progress is shown while it runs.
type ProgressMode int

// The progress modes.
const (
	// ProgressQuiet shows nothing: standard error is not a terminal (a
	// pipe, a file, a CI job other than the Action) and -v was not given.
	ProgressQuiet ProgressMode = iota
	// ProgressTerminal rewrites one line in place: on every item done and,
	// while nothing finishes, at least every TerminalRefresh.
	ProgressTerminal
	// ProgressLog prints plain lines, calmer: one per tenth of the items
	// done and, while nothing finishes, one every LogRefresh (the Action
	// log, or -v).
	ProgressLog
)

// ProgressModeFor is the mode for a standard error that is a terminal or
// not, under -v or not, in the GitHub Action's log or not: rewritten in
// place on a terminal, plain calmer lines in the Action's log or under -v,
// else nothing.
func ProgressModeFor(terminal, verbose, actionLog bool) ProgressMode {
	switch {
	case terminal:
		return ProgressTerminal
	case verbose || actionLog:
		return ProgressLog
	}
	return ProgressQuiet
}

// How often a review that is waiting says so: on a terminal at least
// every TerminalRefresh, in a log at most every LogRefresh.
const (
	TerminalRefresh = 10 * time.Second
	LogRefresh      = time.Minute
)

// Progress reports a review's progress: the items done, and while it waits
// (issue 22: "nothing is printed until the first item finishes: 2 minutes
// with the defaults, 5 on a LiteLLM route") what is in flight, on which
// route, for how long and with what deadline, and what waits and why. It is
// safe for concurrent use.
type Progress struct {
	w     io.Writer
	mode  ProgressMode
	total int
	start time.Time

	mu       sync.Mutex
	done     int
	last     int       // items done at the last 10% line (ProgressLog)
	printed  time.Time // when the last line was printed
	activity func() []execution.Activity
	wrote    bool // a terminal line is on screen
}

// NewProgress reports to w in mode on total items.
func NewProgress(w io.Writer, mode ProgressMode, total int) *Progress {
	return &Progress{w: w, mode: mode, total: total, start: time.Now()}
}

// Update says done of total items are done.
func (p *Progress) Update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	switch p.mode {
	case ProgressTerminal:
		p.print()
	case ProgressLog:
		if step := max(1, total/10); done == total || done-p.last >= step {
			p.last = done
			p.print()
		}
	}
}

// Watch shows, while the review runs, what activity reports (the engine's
// Engine.Activity) whenever a refresh is due: every TerminalRefresh on a
// terminal, every LogRefresh in a log when no line was printed for that
// long. It starts one goroutine, which the returned stop ends (and waits
// for); call stop before Finish. In ProgressQuiet it starts nothing.
func (p *Progress) Watch(activity func() []execution.Activity) (stop func()) {
	every := TerminalRefresh
	switch p.mode {
	case ProgressQuiet:
		return func() {}
	case ProgressLog:
		every = LogRefresh
	}
	p.mu.Lock()
	p.activity = activity
	p.mu.Unlock()
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() { // ends when stop is called
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				p.tick(every)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-ended
			p.mu.Lock()
			p.activity = nil
			p.mu.Unlock()
		})
	}
}

// tick prints a refresh when none was printed for every.
func (p *Progress) tick(every time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.printed) >= every || p.mode == ProgressTerminal {
		p.print()
	}
}

// print writes the progress line; p.mu is held.
func (p *Progress) print() {
	line := fmt.Sprintf("warden: %d/%d items done, %s", p.done, p.total, time.Since(p.start).Round(100*time.Millisecond))
	if p.activity != nil && p.done < p.total {
		if what := DescribeActivity(p.activity()); what != "" {
			line += "; " + what
		}
	}
	p.printed = time.Now()
	if p.mode == ProgressTerminal {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line) // rewritten in place, the rest of the old line cleared
		p.wrote = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// Finish ends the line a terminal's progress was rewriting.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == ProgressTerminal && p.wrote {
		fmt.Fprintln(p.w)
	}
}

// DescribeActivity says in one line what the items in flight are doing:
// the calls in flight per route, the longest one's age and its deadline;
// the items waiting per route and what for. "" when nothing is.
//
//	in flight: primary 8 (longest 1m50s of its 2m0s deadline); waiting: primary 4 (breaker)
func DescribeActivity(acts []execution.Activity) string {
	type flight struct {
		route            string
		n                int
		longest, allowed time.Duration
	}
	type wait struct {
		route, what string
		n           int
	}
	var flights []*flight
	var waits []*wait
	for _, a := range acts {
		if a.Waiting == "" {
			i := slices.IndexFunc(flights, func(f *flight) bool { return f.route == a.Route })
			if i < 0 {
				flights = append(flights, &flight{route: a.Route})
				i = len(flights) - 1
			}
			f := flights[i]
			f.n++
			if a.Since >= f.longest {
				f.longest, f.allowed = a.Since, a.Deadline
			}
			continue
		}
		i := slices.IndexFunc(waits, func(w *wait) bool { return w.route == a.Route && w.what == a.Waiting })
		if i < 0 {
			waits = append(waits, &wait{route: a.Route, what: a.Waiting})
			i = len(waits) - 1
		}
		waits[i].n++
	}
	var parts []string
	if len(flights) > 0 {
		var fs []string
		for _, f := range flights {
			fs = append(fs, fmt.Sprintf("%s %d (longest %s of its %s deadline)", OneLine(f.route), f.n, f.longest.Round(time.Second), f.allowed.Round(time.Second)))
		}
		parts = append(parts, "in flight: "+strings.Join(fs, ", "))
	}
	if len(waits) > 0 {
		var ws []string
		for _, w := range waits {
			ws = append(ws, fmt.Sprintf("%s %d (%s)", OneLine(w.route), w.n, w.what))
		}
		parts = append(parts, "waiting: "+strings.Join(ws, ", "))
	}
	return strings.Join(parts, "; ")
}
