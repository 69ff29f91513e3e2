package secrets

import (
	"regexp"
	"strings"
)

// Redact returns text with each match's secret replaced by its
// placeholder. The text keeps its lines: a secret that spans lines (a
// private key block) leaves a placeholder on each of them. ms must be
// Scan's matches of text.
func Redact(text string, ms []Match) string {
	if len(ms) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, m := range ms {
		if m.Start < at || m.End > len(text) {
			continue // not this text's matches
		}
		b.WriteString(text[at:m.Start])
		for i, part := range strings.Split(text[m.Start:m.End], "\n") {
			if i > 0 {
				b.WriteByte('\n')
			}
			if strings.TrimSpace(part) != "" {
				b.WriteString(m.Placeholder())
			}
			if strings.HasSuffix(part, "\r") {
				b.WriteByte('\r')
			}
		}
		at = m.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// Mask returns s with every held value replaced by REDACTED: for what
// warden writes that no rule should rewrite (a log line, an error, a
// report), where only the values it holds must never appear.
func (s *Scanner) Mask(text string) string {
	values := make([]string, len(s.held))
	for i, v := range s.held {
		values[i] = v.value
	}
	return Mask(text, values...)
}

// Masked is what Mask writes instead of a value.
const Masked = "REDACTED"

// bearer is an Authorization header's credential as a server may echo it.
var bearer = regexp.MustCompile(`(?i)\bBearer\s+[A-Za-z0-9._~+/=-]+`)

// Mask returns text with each of values (those of 4 characters or more:
// a shorter one would garble text and is no secret) replaced by Masked,
// and any "Bearer <credential>" as a server echoes an Authorization header
// by "Bearer REDACTED": the one redaction of the keys and tokens warden
// holds in errors, log lines and reports (the provider adapter's errors,
// the GitHub client's).
func Mask(text string, values ...string) string {
	for _, v := range values {
		if len(v) >= 4 && strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Masked)
		}
	}
	return bearer.ReplaceAllString(text, "Bearer "+Masked)
}
