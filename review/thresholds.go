package review

import "fmt"

// The default thresholds (DESIGN.md §5, contract): fail on high, report
// every severity, at most 50 findings.
const (
	DefaultFailOn      = SeverityHigh
	DefaultReportOn    = SeverityNone
	DefaultMaxFindings = 50
)

// Thresholds are a review's fail-on, report-on and max-findings, resolved
// once (ResolveThresholds) and used by the review, the exit code, the check
// run and every sink.
type Thresholds struct {
	FailOn      Severity // a finding at or above it blocks; SeverityNone: never
	ReportOn    Severity // findings below it are not reported; SeverityNone: all
	MaxFindings int      // at most this many findings, most severe first; 0: no cap
}

// ThresholdSettings is one layer of settings (the configuration file, the
// flags or the Action's inputs); a nil field is not set.
type ThresholdSettings struct {
	FailOn      *Severity
	ReportOn    *Severity
	MaxFindings *int
}

// ResolveThresholds applies the layers in order over the defaults, a later
// layer overriding an earlier one, and refuses a report-on above fail-on (a
// blocking finding would not be reported).
func ResolveThresholds(layers ...ThresholdSettings) (Thresholds, error) {
	t := Thresholds{FailOn: DefaultFailOn, ReportOn: DefaultReportOn, MaxFindings: DefaultMaxFindings}
	for _, l := range layers {
		if l.FailOn != nil {
			t.FailOn = *l.FailOn
		}
		if l.ReportOn != nil {
			t.ReportOn = *l.ReportOn
		}
		if l.MaxFindings != nil {
			t.MaxFindings = *l.MaxFindings
		}
	}
	if t.FailOn != SeverityNone && t.ReportOn > t.FailOn {
		return Thresholds{}, fmt.Errorf("report_on (%s) is above fail_on (%s): a blocking finding would not be reported", t.ReportOn, t.FailOn)
	}
	return t, nil
}

// Shown reports the findings of fs at or above report-on, in their order.
func (t Thresholds) Shown(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity.ShownAt(t.ReportOn) {
			out = append(out, f)
		}
	}
	return out
}

// Apply re-applies the thresholds to a finished report (one read back from
// a file): at most max-findings are kept, most severe first (the same
// order and cap as Run), and the policy shows the thresholds applied.
// Findings below report-on stay in the report, as Run would not have kept
// them only under the analysis's own report-on; every sink shows them by
// Shown. It returns how many findings the cap dropped.
func (t Thresholds) Apply(r *Report) (capped int) {
	var drop FindingsDropped
	r.Findings = selectFindings(r.Findings, SeverityNone, t.MaxFindings, &drop)
	r.Summary.Findings = len(r.Findings)
	r.Policy.FailOn, r.Policy.ReportOn, r.Policy.MaxFindings = t.FailOn.String(), t.ReportOn.String(), t.MaxFindings
	return drop.MaxFindings
}
