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
