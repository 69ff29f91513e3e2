package review

import (
	"strconv"
	"strings"
)

// Plural is one when n is 1, else many: the one plural of every message
// and sink ("1 finding was", "3 findings were").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OneLine folds s onto one line: every run of white space, newlines
// included, becomes one space. report.OneLine adds the dropping of control
// characters for what is shown.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Counted is n and its noun: "1 file", "1,500 files".
func Counted(n int, one, many string) string { return Count(n) + " " + Plural(n, one, many) }

// Count is n with thousands separators: "12,345".
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
