package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Caps on the text a model may put in one finding.
const (
	maxFindingTitle       = 200
	maxFindingDescription = 4000
	maxFindingSuggestion  = 8000
)

// MaxFindingsPerAnswer caps the findings kept from one answer (one item);
// the rest are counted in Summary.FindingsDropped.AnswerCap.
const MaxFindingsPerAnswer = 50

// MaxAnswerBytes caps a model's answer: a longer one is not parsed, and the
// item fails bad_response. Fifty findings of capped size fit well inside.
const MaxAnswerBytes = 1 << 20

// rawFinding is a finding as a model wrote it: loosely typed, so that a
// number written as a string or a missing field does not sink the answer.
type rawFinding struct {
	Skill       string          `json:"skill"` // batched answers only
	Severity    string          `json:"severity"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	StartLine   json.RawMessage `json:"start_line"`
	EndLine     json.RawMessage `json:"end_line"`
	Suggestion  string          `json:"suggestion"`
	Confidence  json.RawMessage `json:"confidence"`
}

// errNoAnswer is returned when no JSON object with a findings array is found.
var errNoAnswer = errors.New(`no JSON object with a "findings" array in the answer`)

// maxObjectStarts bounds how many '{' positions ParseAnswer tries, so an
// answer full of braces costs linear time, not quadratic.
const maxObjectStarts = 64

// ParseAnswer reads a model's answer: one JSON object {"findings": [...]},
// possibly inside a code fence or after some prose. It returns an error when
// no such object can be found; an empty findings array is a valid answer.
// The findings are not yet validated against a chunk (see validate).
func ParseAnswer(content string) ([]rawFinding, error) {
	return decodeAnswer[rawFinding](content)
}

// decodeAnswer finds the answer object in content and decodes its findings
// as Ts.
func decodeAnswer[T any](content string) ([]T, error) {
	if len(content) > MaxAnswerBytes {
		return nil, fmt.Errorf("answer of %d bytes is over the %d-byte cap: not read", len(content), MaxAnswerBytes)
	}
	s := strings.TrimSpace(content)
	if s == "" {
		return nil, errors.New("empty answer")
	}
	// Most likely starts first: an object whose first key is "findings".
	var starts []int
	for off := 0; off < len(s) && len(starts) < maxObjectStarts; {
		i := findingsObject.FindStringIndex(s[off:])
		if i == nil {
			break
		}
		starts = append(starts, off+i[0])
		off += i[0] + 1
	}
	for off, n := 0, 0; off < len(s) && n < maxObjectStarts; n++ {
		i := strings.IndexByte(s[off:], '{')
		if i < 0 {
			break
		}
		starts = append(starts, off+i)
		off += i + 1
	}
	var firstErr error
	for _, at := range starts {
		var a struct {
			Findings *[]T `json:"findings"`
		}
		err := json.NewDecoder(strings.NewReader(s[at:])).Decode(&a)
		if err == nil && a.Findings != nil {
			return *a.Findings, nil
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, fmt.Errorf("%w (%v)", errNoAnswer, firstErr)
	}
	return nil, errNoAnswer
}

// batchAnswer is an answer for several skills, split by skill.
type batchAnswer struct {
	findings map[string][]rawFinding // by skill name
	bad      map[string]error        // skills with a finding that could not be read
	dropped  int                     // findings naming no skill of the batch
}

// parseBatchAnswer reads the answer to a batched request for the skills
// names. It errors, like ParseAnswer, when the answer holds no findings
// array. Each finding is read on its own: one that names no skill of the
// batch is dropped; one whose fields cannot be read marks its skill bad,
// and leaves the other skills' findings alone.
func parseBatchAnswer(content string, names []string) (*batchAnswer, error) {
	raws, err := decodeAnswer[json.RawMessage](content)
	if err != nil {
		return nil, err
	}
	a := &batchAnswer{findings: map[string][]rawFinding{}, bad: map[string]error{}}
	for _, raw := range raws {
		var tag struct {
			Skill string `json:"skill"`
		}
		_ = json.Unmarshal(raw, &tag) // a skill that is not a string names no skill
		name := strings.ToLower(strings.TrimSpace(tag.Skill))
		if !slices.Contains(names, name) {
			a.dropped++
			continue
		}
		var f rawFinding
		if err := json.Unmarshal(raw, &f); err != nil {
			if a.bad[name] == nil {
				a.bad[name] = fmt.Errorf("finding of skill %q: %w", name, err)
			}
			continue
		}
		a.findings[name] = append(a.findings[name], f)
	}
	return a, nil
}

var findingsObject = regexp.MustCompile(`\{\s*"findings"\s*:`)

// lineRange is the new-side range a finding may point at.
type lineRange struct{ start, end int }

// validate turns a model's findings into Findings: severity normalized,
// lines inside r (otherwise clamped and marked), text capped. The path,
// skill, route and model come from base (the item's own), never from the
// model. Findings with neither a title nor a description are dropped, and
// so is every finding after the first MaxFindingsPerAnswer; drop counts
// them.
func validate(raw []rawFinding, r lineRange, base Finding, drop *FindingsDropped) []Finding {
	if drop == nil {
		drop = new(FindingsDropped)
	}
	var out []Finding
	for _, f := range raw {
		title := OneLine(strings.TrimSpace(f.Title))
		desc := strings.TrimSpace(f.Description)
		if title == "" && desc == "" {
			drop.NoText++
			continue
		}
		if len(out) == MaxFindingsPerAnswer {
			drop.AnswerCap++
			continue
		}
		if title == "" {
			title = OneLine(firstSentence(desc))
		}
		g := base
		g.Severity = normalizeSeverity(f.Severity)
		g.Title = capText(title, maxFindingTitle)
		g.Description = capText(desc, maxFindingDescription)
		g.Confidence = clamp01(number(f.Confidence, 0))
		start, okStart := lineNumber(f.StartLine)
		end, okEnd := lineNumber(f.EndLine)
		if !okEnd {
			end, okEnd = start, okStart
		}
		if start > end {
			start, end = end, start
		}
		if !okStart || start < r.start || end > r.end {
			g.Clamped = true
			start = min(max(start, r.start), r.end)
			end = min(max(end, start), r.end)
			if !okStart {
				start, end = r.start, r.end
			}
		}
		g.StartLine, g.EndLine = start, end
		if !g.Clamped && utf8.ValidString(f.Suggestion) && len(f.Suggestion) <= maxFindingSuggestion {
			// A suggestion replaces exactly start..end; after clamping
			// that range is not what the model meant, so it is dropped.
			g.Suggestion = strings.TrimSuffix(f.Suggestion, "\n")
		}
		out = append(out, g)
	}
	return out
}

// normalizeSeverity maps a model's severity word to the enum. Unknown words
// become medium: neither hidden nor blocking by default.
func normalizeSeverity(s string) Severity {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "critical", "blocker", "fatal", "severe":
		return SeverityCritical
	case "high", "major", "error", "important":
		return SeverityHigh
	case "medium", "moderate", "warning", "warn":
		return SeverityMedium
	case "low", "minor", "note":
		return SeverityLow
	case "info", "informational", "nit", "trivial", "suggestion":
		return SeverityInfo
	}
	return SeverityMedium
}

// lineNumber reads a line number written as a JSON number or a numeric
// string. Non-positive or unreadable values are not a line.
func lineNumber(b json.RawMessage) (int, bool) {
	v := number(b, math.NaN())
	if math.IsNaN(v) || v < 1 || v > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}

// number reads a JSON number or numeric string, or returns def.
func number(b json.RawMessage, def float64) float64 {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return def
	}
	var v float64
	if json.Unmarshal(b, &v) == nil && !math.IsInf(v, 0) {
		return v
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		if json.Unmarshal([]byte(strings.TrimSpace(s)), &v) == nil && !math.IsInf(v, 0) {
			return v
		}
	}
	return def
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return min(max(v, 0), 1)
}

// capText cuts s to n runes, marking the cut, and replaces invalid UTF-8.
func capText(s string, n int) string {
	return truncate(strings.ToValidUTF8(s, "\uFFFD"), n)
}

func firstSentence(s string) string {
	if i := strings.IndexAny(s, ".\n"); i > 0 {
		return s[:i]
	}
	return s
}
