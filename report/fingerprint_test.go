package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

// idFinding is a finding with the given identity (review's identify).
func idFinding(title, fp, twin, prior string) review.Finding {
	return review.Finding{Skill: "code-review", Path: "a.go", Title: title, Fingerprint: fp, Twin: twin, PriorFingerprint: prior}
}

// TestMatch: an earlier run's mark is this run's finding on the same code
// whatever changed beside it; of two findings on identical code (twins)
// each keeps its own mark; another code under a finding is another
// finding; the marks of earlier versions are read by their own rules; a
// mark stands for one finding.
func TestMatch(t *testing.T) {
	t.Parallel()
	fpA, fpB := strings.Repeat("a", 32), strings.Repeat("b", 32)
	tw1, tw2, tw3 := strings.Repeat("1", 16), strings.Repeat("2", 16), strings.Repeat("3", 16)
	prior := strings.Repeat("c", 32)
	v3 := func(fp, twin string) Mark { return Mark{Version: 3, Fingerprint: fp, Twin: twin} }
	one := idFinding("x", fpA, tw1, prior)
	for _, tt := range []struct {
		name  string
		marks []Mark
		fs    []review.Finding
		want  []int
	}{
		{"the same code, the same neighbours", []Mark{v3(fpA, tw1)}, []review.Finding{one}, []int{0}},
		{"a neighbouring edit", []Mark{v3(fpA, tw2)}, []review.Finding{one}, []int{0}},
		{"its own line edited", []Mark{v3(fpB, tw1)}, []review.Finding{one}, []int{-1}},
		{"twins, each its own, in any order",
			[]Mark{v3(fpA, tw1), v3(fpA, tw2)},
			[]review.Finding{idFinding("x", fpA, tw2, ""), idFinding("x", fpA, tw1, "")}, []int{1, 0}},
		{"twins, the second's neighbours edited",
			[]Mark{v3(fpA, tw1), v3(fpA, tw2)},
			[]review.Finding{idFinding("x", fpA, tw3, ""), idFinding("x", fpA, tw1, "")}, []int{1, 0}},
		{"one mark, two twins", []Mark{v3(fpA, tw2)}, []review.Finding{idFinding("x", fpA, tw1, ""), idFinding("x", fpA, tw2, "")}, []int{1}},
		{"a mark held twice, one finding", []Mark{v3(fpA, tw1), v3(fpA, tw1)}, []review.Finding{one}, []int{0, -1}},
		{"version 2: by the prior fingerprint", []Mark{{Version: 2, Fingerprint: prior}}, []review.Finding{one}, []int{0}},
		{"version 2: its neighbours changed", []Mark{{Version: 2, Fingerprint: fpA}}, []review.Finding{one}, []int{-1}},
		{"version 1: by the title", []Mark{{Version: 1, Fingerprint: LegacyFingerprint(one)}}, []review.Finding{one}, []int{0}},
		{"version 1: reworded", []Mark{{Version: 1, Fingerprint: LegacyFingerprint(idFinding("y", "", "", ""))}}, []review.Finding{one}, []int{-1}},
	} {
		if got := Match(tt.marks, tt.fs); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Match = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestParseMark: a mark reads back from its String; anything else is not
// a mark.
func TestParseMark(t *testing.T) {
	t.Parallel()
	fp, twin := strings.Repeat("0f", 16), strings.Repeat("9", 16)
	for _, m := range []Mark{{Version: 3, Fingerprint: fp, Twin: twin}, {Version: 2, Fingerprint: fp}, {Version: 1, Fingerprint: fp}} {
		if got, ok := ParseMark(m.String()); !ok || got != m {
			t.Errorf("ParseMark(%q) = %+v, %v, want %+v", m.String(), got, ok, m)
		}
	}
	for _, s := range []string{"", "v3:" + fp, "v3:" + fp + ":" + twin[:15], "v2:" + fp[:31], strings.ToUpper(fp)} {
		if _, ok := ParseMark(s); ok {
			t.Errorf("ParseMark(%q) = ok, want not a mark", s)
		}
	}
}
