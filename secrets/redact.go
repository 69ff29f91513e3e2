package secrets

import "strings"

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
	for _, v := range s.held {
		if strings.Contains(text, v.value) {
			text = strings.ReplaceAll(text, v.value, "REDACTED")
		}
	}
	return text
}
