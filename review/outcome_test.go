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
	limited := &Coverage{NotReviewed: []Gap{{Reason: LimitMaxFiles, Files: 1022, Lines: 40000}}}
	excludedOnly := &Coverage{Excluded: []Gap{{Reason: "generated", Files: 1, Lines: 3}}}
	tests := []struct {
		name  string
		items []Item
		cov   *Coverage
		want  Outcome
	}{
		{"nothing to review", nil, nil, OutcomeComplete},
		{"all reviewed", items(StatusReviewed, StatusReviewed), nil, OutcomeComplete},
		{"one failed", items(StatusReviewed, StatusFailed), nil, OutcomePartial},
		{"one skipped", items(StatusReviewed, StatusSkipped), nil, OutcomePartial},
		{"all failed", items(StatusFailed, StatusFailed), nil, OutcomeProviderUnavailable},
		{"failed and skipped, none reviewed", items(StatusFailed, StatusSkipped), nil, OutcomeProviderUnavailable},
		{"all skipped before any failure", items(StatusSkipped, StatusSkipped), nil, OutcomePartial},
		{"all reviewed, a limit dropped files in scope", items(StatusReviewed), limited, OutcomePartial},
		{"nothing planned, a limit dropped every file", nil, limited, OutcomePartial},
		{"all failed, a limit dropped files too", items(StatusFailed), limited, OutcomeProviderUnavailable},
		{"all reviewed, the rest excluded by policy", items(StatusReviewed), excludedOnly, OutcomeComplete},
		{"nothing planned, everything excluded by policy", nil, excludedOnly, OutcomeComplete},
	}
	for _, tt := range tests {
		if got := Decide(tt.items, tt.cov); got != tt.want {
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
		{"claims complete with files over max_files", Report{Outcome: OutcomeComplete, Items: reviewed,
			Coverage: Coverage{NotReviewed: []Gap{{Reason: LimitMaxFiles, Files: 3, Lines: 9}}}}, SeverityHigh, false, false},
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
