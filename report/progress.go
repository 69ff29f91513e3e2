package report

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress reports work items done: a line rewritten in place on a
// terminal, plain lines (at most one per 10%) otherwise. It is safe for
// concurrent use.
type Progress struct {
	w     io.Writer
	tty   bool
	total int
	start time.Time
	mu    sync.Mutex
	last  int
}

// NewProgress reports to w (a terminal when tty) on total items.
func NewProgress(w io.Writer, tty bool, total int) *Progress {
	return &Progress{w: w, tty: tty, total: total, start: time.Now()}
}

// Update says done of total items are done.
func (p *Progress) Update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start).Round(100 * time.Millisecond)
	if p.tty {
		fmt.Fprintf(p.w, "\rwarden: %d/%d items done, %s", done, total, elapsed)
		return
	}
	if step := max(1, total/10); done == total || done-p.last >= step {
		p.last = done
		fmt.Fprintf(p.w, "warden: %d/%d items done, %s\n", done, total, elapsed)
	}
}

// Finish ends the line a terminal's progress was rewriting.
func (p *Progress) Finish() {
	if p.tty && p.total > 0 {
		fmt.Fprintln(p.w)
	}
}
