package github

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/review"
)

func TestWriteAnnotations(t *testing.T) {
	t.Parallel()
	many := func(sev review.Severity, n int) []review.Finding {
		var out []review.Finding
		for i := range n {
			out = append(out, review.Finding{Severity: sev, Title: fmt.Sprint(sev, i), Path: "a.go", StartLine: i + 1})
		}
		return out
	}
	tests := []struct {
		name        string
		findings    []review.Finding
		reportOn    review.Severity
		wantWritten int
		wantDropped int
		wantKinds   map[string]int
	}{
		{"few", many(review.SeverityHigh, 2), review.SeverityNone, 2, 0, map[string]int{"error": 2}},
		{"below report-on is not dropped, just not shown", concat(many(review.SeverityHigh, 1), many(review.SeverityLow, 3)), review.SeverityMedium, 1, 0, map[string]int{"error": 1}},
		{"errors capped", many(review.SeverityCritical, 15), review.SeverityNone, 10, 5, map[string]int{"error": 10, "notice": 1}},
		{"warnings capped", concat(many(review.SeverityMedium, 8), many(review.SeverityLow, 8)), review.SeverityNone, 10, 6, map[string]int{"warning": 10, "notice": 1}},
		{"notices full: the note takes the last slot", concat(many(review.SeverityInfo, 12), many(review.SeverityHigh, 11)), review.SeverityNone, 19, 4, map[string]int{"error": 10, "notice": 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			written, dropped := WriteAnnotations(&b, tt.findings, tt.reportOn)
			if written != tt.wantWritten || dropped != tt.wantDropped {
				t.Errorf("WriteAnnotations() = %d, %d, want %d, %d", written, dropped, tt.wantWritten, tt.wantDropped)
			}
			kinds := map[string]int{}
			for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				kind, _, _ := strings.Cut(strings.TrimPrefix(line, "::"), " ")
				kinds[kind]++
			}
			if diff := cmp.Diff(tt.wantKinds, kinds); diff != "" {
				t.Errorf("annotation kinds (-want +got):\n%s", diff)
			}
			if tt.wantDropped > 0 && !strings.Contains(b.String(), fmt.Sprintf("%d more findings are not annotated", tt.wantDropped)) {
				t.Errorf("output %q does not say how many were dropped", b.String())
			}
		})
	}
}

func TestWriteAnnotationsEscapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	f := review.Finding{Severity: review.SeverityHigh, Title: "a, b: c", Description: "line one\n::add-mask::x\r\n100%", Path: "dir/a,b.go", StartLine: 3, EndLine: 5}
	WriteAnnotations(&b, []review.Finding{f}, review.SeverityNone)
	want := "::error endLine=5,file=dir/a%2Cb.go,line=3,title=[high] a%2C b%3A c::line one%0A::add-mask::x%0A100%25\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteAnnotations() (-want +got):\n%s", diff)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestWriteAnnotationsWriteError(t *testing.T) {
	t.Parallel()
	written, _ := WriteAnnotations(failingWriter{}, findingsOf(review.SeverityHigh), review.SeverityNone)
	if written != 0 {
		t.Errorf("WriteAnnotations(failing writer) wrote %d, want 0", written)
	}
}
