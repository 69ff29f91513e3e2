package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// event is one line of `go test -json` (go doc cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output, build-fail
}

// peersDir is where the real-peer tiers live: tests that skip without
// their binaries (README, "Test tiers against real peers").
const peersDir = "internal/peers/"

// pkg is what one package's tests did.
type pkg struct {
	all     []string            // every output line, in order
	own     []string            // the package's own lines (ok, FAIL, a TestMain's)
	tests   map[string][]string // each test's output lines
	skipped []skip
	done    bool
}

type skip struct{ test, reason string }

// summary is the run so far.
type summary struct {
	w                      io.Writer
	pkgs                   map[string]*pkg
	passed, failed, noTest int
	failedPkgs             []string
	buildFailed            bool
}

// summarize reads go test's JSON from r and writes the summary to w; ok is
// false when something failed or nothing was tested.
func summarize(r io.Reader, w io.Writer) (ok bool, err error) {
	s := &summary{w: w, pkgs: map[string]*pkg{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line) // not go test's JSON: as it came
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading go test's output: %w", err)
	}
	if len(s.pkgs) == 0 {
		return false, fmt.Errorf("no test result on standard input: run go test -json ./... | go run ./internal/testsummary")
	}
	s.report()
	return s.failed == 0 && len(s.failedPkgs) == 0 && !s.buildFailed, nil
}

func (s *summary) add(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
		return
	case "build-fail":
		s.buildFailed = true
		return
	}
	if e.Package == "" {
		return
	}
	p := s.pkgs[e.Package]
	if p == nil {
		p = &pkg{tests: map[string][]string{}}
		s.pkgs[e.Package] = p
	}
	if e.Test != "" {
		s.addTest(p, e)
		return
	}
	switch e.Action {
	case "output":
		p.all = append(p.all, e.Output)
		p.own = append(p.own, e.Output)
	case "pass", "skip": // skip: a package without test files
		for _, l := range p.own {
			if l != "PASS\n" && !strings.HasPrefix(l, "testing: warning: no tests to run") {
				fmt.Fprint(s.w, l)
			}
		}
		if e.Action == "skip" {
			s.noTest++
		}
		p.done = true
	case "fail":
		for _, l := range p.all {
			fmt.Fprint(s.w, l)
		}
		s.failedPkgs = append(s.failedPkgs, e.Package)
		p.done = true
	}
}

func (s *summary) addTest(p *pkg, e event) {
	switch e.Action {
	case "output":
		p.all = append(p.all, e.Output)
		p.tests[e.Test] = append(p.tests[e.Test], e.Output)
	case "pass":
		s.passed++
	case "fail":
		s.failed++
	case "skip":
		p.skipped = append(p.skipped, skip{e.Test, skipReason(p.tests[e.Test])})
	}
}

// skipReason is the message a test gave t.Skip: its first line of output
// that is not the test runner's own, without the file:line prefix.
func skipReason(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if file, msg, ok := strings.Cut(t, ": "); ok && strings.Contains(file, ".go:") && !strings.Contains(file, " ") {
			return msg
		}
		return t
	}
	return "(no reason given)"
}

// report writes the totals, the skipped tests grouped by package and
// reason, and how to run the real-peer tiers when they were skipped.
func (s *summary) report() {
	prefix := commonDir(slices.Collect(maps.Keys(s.pkgs)))
	type group struct {
		pkg, reason string
		n           int
	}
	var groups []group
	skipped, peers := 0, 0
	var peerPkgs []string
	for _, name := range slices.Sorted(maps.Keys(s.pkgs)) {
		short := strings.TrimPrefix(name, prefix)
		for _, sk := range s.pkgs[name].skipped {
			skipped++
			if strings.HasPrefix(name+"/", peersDir) || strings.Contains(name+"/", "/"+peersDir) {
				peers++
				if !slices.Contains(peerPkgs, short) {
					peerPkgs = append(peerPkgs, short)
				}
			}
			if i := slices.IndexFunc(groups, func(g group) bool { return g.pkg == short && g.reason == sk.reason }); i >= 0 {
				groups[i].n++
			} else {
				groups = append(groups, group{short, sk.reason, 1})
			}
		}
	}
	fmt.Fprintf(s.w, "\n%s passed, %s skipped, %s failed, in %s",
		count(s.passed, "test"), count(skipped, "test"), count(s.failed, "test"), count(len(s.pkgs)-s.noTest, "package"))
	if s.noTest > 0 {
		fmt.Fprintf(s.w, " (and %s without tests)", count(s.noTest, "package"))
	}
	fmt.Fprintln(s.w, ".")
	if len(s.failedPkgs) > 0 || s.buildFailed {
		fmt.Fprintf(s.w, "FAILED: %s\n", strings.Join(shorten(slices.Sorted(slices.Values(s.failedPkgs)), prefix), ", "))
	}
	if skipped > 0 {
		fmt.Fprintln(s.w, "Skipped, by package and reason:")
		slices.SortStableFunc(groups, func(a, b group) int { return cmp.Compare(b.n, a.n) })
		for _, g := range groups {
			fmt.Fprintf(s.w, "  %4d  %s: %s\n", g.n, g.pkg, g.reason)
		}
	}
	if peers > 0 {
		fmt.Fprintf(s.w, "The real-peer tiers did not run: %s in %s skipped for want of their binaries. "+
			"To run them, `bash .ci/run` builds ollama and act once into ~/.cache/warden-peers/bin and runs everything; "+
			"or set WARDEN_OLLAMA_BIN and WARDEN_ACT_BIN and run WARDEN_REAL_PEERS=1 go test ./internal/peers/... "+
			"(README: Test tiers against real peers).\n", count(peers, "test"), strings.Join(peerPkgs, " and "))
	}
}

// count is "1 test", "12 tests".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// commonDir is the longest directory prefix ("github.com/org/warden/") all
// names share, "" when they share none.
func commonDir(names []string) string {
	if len(names) == 0 {
		return ""
	}
	p := names[0] + "/"
	for _, n := range names[1:] {
		for !strings.HasPrefix(n+"/", p) {
			i := strings.LastIndex(strings.TrimSuffix(p, "/"), "/")
			if i < 0 {
				return ""
			}
			p = p[:i+1]
		}
	}
	if len(names) == 1 {
		i := strings.LastIndex(names[0], "/")
		return names[0][:i+1]
	}
	return p
}

func shorten(names []string, prefix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = cmp.Or(strings.TrimPrefix(n, prefix), n)
	}
	return out
}
