package review

import "testing"

func TestDecide(t *testing.T) {
	t.Parallel()
	items := func(statuses ...ItemStatus) []Item {
		var out []Item
		for _, s := range statuses {
			out = append(out, Item{Status: s})
		}
		return out
	}
	tests := []struct {
		name  string
		items []Item
		want  Outcome
	}{
		{"nothing to review", nil, OutcomeComplete},
		{"all reviewed", items(StatusReviewed, StatusReviewed), OutcomeComplete},
		{"one failed", items(StatusReviewed, StatusFailed), OutcomePartial},
		{"one skipped", items(StatusReviewed, StatusSkipped), OutcomePartial},
		{"all failed", items(StatusFailed, StatusFailed), OutcomeProviderUnavailable},
		{"failed and skipped, none reviewed", items(StatusFailed, StatusSkipped), OutcomeProviderUnavailable},
		{"all skipped before any failure", items(StatusSkipped, StatusSkipped), OutcomePartial},
	}
	for _, tt := range tests {
		if got := Decide(tt.items); got != tt.want {
			t.Errorf("Decide(%s) = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestSeverity(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"off", "info", "low", "medium", "high", "critical"} {
		s, err := ParseSeverity(name)
		if err != nil || s.String() != name {
			t.Errorf("ParseSeverity(%q) = %v, %v; want %s", name, s, err, name)
		}
	}
	if _, err := ParseSeverity("urgent"); err == nil {
		t.Errorf("ParseSeverity(urgent) = nil error, want an error")
	}
	if SeverityCritical.AtLeast(SeverityNone) {
		t.Errorf("SeverityCritical.AtLeast(off) = true, want false: off blocks nothing")
	}
	if !SeverityHigh.AtLeast(SeverityHigh) || SeverityMedium.AtLeast(SeverityHigh) {
		t.Errorf("AtLeast is not >= on the scale")
	}
}

func TestReportBlocksAndComplete(t *testing.T) {
	t.Parallel()
	high := []Finding{{Severity: SeverityHigh}}
	reviewed := []Item{{Status: StatusReviewed}}
	tests := []struct {
		name         string
		r            Report
		failOn       Severity
		wantBlocks   bool
		wantComplete bool
	}{
		{"high at fail-on high", Report{Outcome: OutcomeComplete, Findings: high, Items: reviewed}, SeverityHigh, true, true},
		{"high under fail-on critical", Report{Outcome: OutcomeComplete, Findings: high, Items: reviewed}, SeverityCritical, false, true},
		{"fail-on off blocks nothing", Report{Outcome: OutcomeComplete, Findings: high, Items: reviewed}, SeverityNone, false, true},
		{"partial", Report{Outcome: OutcomePartial, Items: reviewed}, SeverityHigh, false, false},
		{"claims complete with a failed item", Report{Outcome: OutcomeComplete, Items: []Item{{Status: StatusReviewed}, {Status: StatusFailed}}}, SeverityHigh, false, false},
		{"complete with nothing planned", Report{Outcome: OutcomeComplete}, SeverityHigh, false, true},
	}
	for _, tt := range tests {
		if got := tt.r.Blocks(tt.failOn); got != tt.wantBlocks {
			t.Errorf("%s: Blocks(%s) = %v, want %v", tt.name, tt.failOn, got, tt.wantBlocks)
		}
		if got := tt.r.Complete(); got != tt.wantComplete {
			t.Errorf("%s: Complete() = %v, want %v", tt.name, got, tt.wantComplete)
		}
	}
	if !SeverityInfo.ShownAt(SeverityNone) || SeverityLow.ShownAt(SeverityMedium) || !SeverityHigh.ShownAt(SeverityMedium) {
		t.Errorf("ShownAt is not: everything under off, at or above the threshold otherwise")
	}
}
