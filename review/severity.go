package review

import (
	"fmt"
	"strings"
)

// Severity grades a finding. The zero value is SeverityNone, which is below
// every real severity and, as a threshold, means "off".
type Severity int

// The severities, lowest first.
const (
	SeverityNone Severity = iota
	SeverityInfo
	SeverityLow
	SeverityMedium
	SeverityHigh
	SeverityCritical
)

var severityNames = [...]string{
	SeverityNone:     "off",
	SeverityInfo:     "info",
	SeverityLow:      "low",
	SeverityMedium:   "medium",
	SeverityHigh:     "high",
	SeverityCritical: "critical",
}

// String returns the lower-case name; SeverityNone is "off".
func (s Severity) String() string {
	if s >= 0 && int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// ParseSeverity reads a severity name (case-insensitive). "off" and "none"
// give SeverityNone.
func ParseSeverity(name string) (Severity, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "none" {
		return SeverityNone, nil
	}
	for i, v := range severityNames {
		if v == n {
			return Severity(i), nil
		}
	}
	return SeverityNone, fmt.Errorf("unknown severity %q (want off, critical, high, medium, low or info)", name)
}

// MarshalText implements encoding.TextMarshaler.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Set implements flag.Value.
func (s *Severity) Set(v string) error { return s.UnmarshalText([]byte(v)) }

// AtLeast reports whether s reaches the threshold t. Nothing reaches the
// threshold SeverityNone ("off"): this is the fail-on rule.
func (s Severity) AtLeast(t Severity) bool { return t != SeverityNone && s >= t }

// ShownAt reports whether a finding of severity s is reported under the
// report-on threshold t: everything is when t is SeverityNone ("off").
func (s Severity) ShownAt(t Severity) bool { return t == SeverityNone || s >= t }
