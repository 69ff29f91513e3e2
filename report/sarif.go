package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/org/warden/review"
)

// SARIF constants. GitHub code scanning accepts SARIF 2.1.0; the schema URI
// is the one its documentation uses.
const (
	sarifSchema         = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion        = "2.1.0"
	sarifInformationURI = "https://github.com/org/warden"
	sarifSrcRoot        = "%SRCROOT%"
	// FingerprintKey is the partialFingerprints key of every SARIF result.
	// Its value is the finding's Fingerprint (skill, path and the code of
	// its own lines, never its wording or the code beside it) plus ":n",
	// the occurrence of that fingerprint in the run, so that re-runs match
	// alerts however the model words them and whatever is edited beside
	// them, while two findings on the same code stay distinct. v3: v2
	// hashed two lines on each side in, v1 the title.
	FingerprintKey = "wardenFingerprint/v3"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string    `json:"id"`
	ShortDescription sarifText `json:"shortDescription"`
	FullDescription  sarifText `json:"fullDescription"`
	Help             sarifText `json:"help"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifResultProps  `json:"properties"`
}

type sarifResultProps struct {
	Severity   string `json:"severity"`
	Suggestion string `json:"suggestion,omitempty"`
	// ApproximateLines is set when the model's lines fell outside the
	// reviewed change and were moved into it (review.Finding.Clamped).
	ApproximateLines bool `json:"approximateLines,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	// ToolConfigurationNotifications: skill files not run, and skill
	// warnings (sarifSkillNotifications).
	ToolConfigurationNotifications []sarifNotification `json:"toolConfigurationNotifications,omitempty"`
	Properties                     sarifInvocationProp `json:"properties"`
}

type sarifInvocationProp struct {
	Outcome  string `json:"outcome"`
	Planned  int    `json:"planned"`
	Reviewed int    `json:"reviewed"`
	Failed   int    `json:"failed"`
	Skipped  int    `json:"skipped"`
	// Cached counts the reviewed items answered from the results cache.
	Cached int `json:"cached,omitempty"`
	// Coverage is the report's (review.Coverage), when it has one.
	Coverage *review.Coverage `json:"coverage,omitempty"`
}

type sarifNotification struct {
	Level          string          `json:"level"`
	Message        sarifText       `json:"message"`
	Locations      []sarifLocation `json:"locations,omitempty"`
	AssociatedRule *sarifRuleRef   `json:"associatedRule,omitempty"`
}

type sarifRuleRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

// writeSARIF writes one SARIF 2.1.0 run. Every finding is a result (ReportOn
// does not apply). An incomplete review is marked executionSuccessful=false,
// with a notification for every item that was not reviewed.
func writeSARIF(buf *bytes.Buffer, r *review.Report, opts Options) error {
	rules, index := sarifRules(r)
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:           "warden",
			Version:        opts.ToolVersion,
			InformationURI: sarifInformationURI,
			Rules:          rules,
		}},
		Invocations: []sarifInvocation{sarifInvocationOf(r, index)},
		Results:     []sarifResult{},
	}
	run.Invocations[0].ToolConfigurationNotifications = sarifSkillNotifications(r)
	seen := map[string]int{}
	for _, f := range sorted(r.Findings, byLocation) {
		id := ruleID(f.Skill)
		fp := Fingerprint(f)
		seen[fp]++
		text := OneLine(f.Title)
		if text == "" {
			text = "warden finding"
		}
		if f.Clamped {
			text += " (" + ApproximateLines + ")"
		}
		if d := strings.TrimSpace(sanitize(f.Description, true)); d != "" {
			text += "\n\n" + d
		}
		run.Results = append(run.Results, sarifResult{
			RuleID:              id,
			RuleIndex:           index[id],
			Level:               LevelOf(f.Severity).SARIF(),
			Message:             sarifText{Text: sarifMessage(text)},
			Locations:           []sarifLocation{sarifLocationOf(f.Path, f.StartLine, f.EndLine)},
			PartialFingerprints: map[string]string{FingerprintKey: fp + ":" + strconv.Itoa(seen[fp])},
			Properties: sarifResultProps{
				Severity:         f.Severity.String(),
				Suggestion:       strings.Trim(sanitize(f.Suggestion, true), "\n"),
				ApproximateLines: f.Clamped,
			},
		})
	}
	enc := json.NewEncoder(buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// sarifMessage makes a finding's text inert in a SARIF message, which
// viewers such as GitHub code scanning render: Defang breaks mentions,
// markup and links (no repository address is trusted), and backslashes and
// square brackets are escaped as SARIF 2.1.0 §3.11.6 requires of literal
// brackets, so the text cannot form an embedded link "[text](target)".
func sarifMessage(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(Defang(s, ""))
}

// sarifRules is one rule per skill named by a finding or an item, sorted by
// id, and each id's index.
func sarifRules(r *review.Report) ([]sarifRule, map[string]int) {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, ruleID(f.Skill))
	}
	for _, it := range r.Items {
		ids = append(ids, ruleID(it.Skill))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rules := make([]sarifRule, len(ids))
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
		rules[i] = sarifRule{
			ID:               id,
			ShortDescription: sarifText{Text: "warden skill " + id},
			FullDescription:  sarifText{Text: "Findings reported by the warden review skill " + id + "."},
			Help:             sarifText{Text: "Reported by the AI code reviewer warden running the skill " + id + ". Check the finding before acting on it."},
		}
	}
	return rules, index
}

func ruleID(skill string) string {
	if s := OneLine(skill); s != "" {
		return s
	}
	return "warden"
}

// sarifInvocationOf says whether the review covered everything and, when it
// did not, which items were left out and why.
func sarifInvocationOf(r *review.Report, index map[string]int) sarifInvocation {
	c := countItems(r)
	inv := sarifInvocation{
		ExecutionSuccessful: r.Complete(), // review.Decide's rule, not re-derived here
		Properties: sarifInvocationProp{
			Outcome: string(r.Outcome), Planned: c.planned, Reviewed: c.reviewed, Failed: c.failed, Skipped: c.skipped,
			Cached: r.Summary.Cached,
		},
	}
	if r.Coverage.Known() {
		inv.Properties.Coverage = &r.Coverage
	}
	inv.ToolExecutionNotifications = sarifAddressed(r)
	if r.Outcome == review.OutcomeDryRun {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level:   "note",
			Message: sarifText{Text: "warden: " + longHeadline(r) + ". Nothing was reviewed, so the absence of results says nothing about the code."},
		})
		return inv
	}
	if inv.ExecutionSuccessful {
		return inv
	}
	inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
		Level:   "error",
		Message: sarifText{Text: "warden: " + longHeadline(r) + ". Items that were not reviewed have no results; that does not mean they are clean."},
	})
	for _, g := range r.Coverage.NotReviewed {
		if lim := (&review.Coverage{NotReviewed: []review.Gap{g}}).LimitBreakdown(); lim != "" {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
				Level:   "error",
				Message: sarifText{Text: fmt.Sprintf("Not reviewed: %s (%s); the files are listed in the JSON report's ignored paths.", lim, review.Counted(g.Lines, "changed line", "changed lines"))},
			})
		}
	}
	for _, it := range notReviewed(r) {
		level := "warning"
		if it.Status == review.StatusFailed {
			level = "error"
		}
		msg := fmt.Sprintf("Not reviewed: skill %s on %s: %s (%s)", ruleID(it.Skill),
			dash(textLoc(it.Path, it.StartLine, it.EndLine)), dash(OneLine(string(it.Status))), OneLine(reasonOf(it)))
		if it.Route != "" {
			msg += " on route " + OneLine(it.Route)
		}
		n := sarifNotification{
			Level:          level,
			Message:        sarifText{Text: msg},
			AssociatedRule: &sarifRuleRef{ID: ruleID(it.Skill), Index: index[ruleID(it.Skill)]},
		}
		if it.Path != "" {
			n.Locations = []sarifLocation{sarifLocationOf(it.Path, it.StartLine, it.EndLine)}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	return inv
}

// sarifAddressed is a warning for each place where the text the
// review's requests carried addresses the AI reviewer
// (review.Report.Injections), located when it is on a changed line: the
// models may have obeyed it, so no result here does not mean clean.
func sarifAddressed(r *review.Report) []sarifNotification {
	var out []sarifNotification
	for _, in := range r.Injections {
		says := make([]string, len(in.Rules))
		for i, id := range in.Rules {
			says[i] = OneLine(review.RuleSays(id))
		}
		where := "The pull request's " + OneLine(in.Where)
		if in.Path != "" {
			where = "Changed line " + textLoc(in.Path, in.StartLine, in.EndLine)
		}
		n := sarifNotification{
			Level: "warning",
			Message: sarifText{Text: sarifMessage(fmt.Sprintf("Addressed to the AI reviewer: %s %s (%q). The models may have obeyed it: "+
				"the absence of results does not mean the change is clean.", where, strings.Join(says, ", "), OneLine(in.Text)))},
		}
		if in.Path != "" {
			n.Locations = []sarifLocation{sarifLocationOf(in.Path, in.StartLine, in.EndLine)}
		}
		out = append(out, n)
	}
	return out
}

// sarifLocationOf is a repository-relative location; lines are clamped so
// that startLine ≥ 1 and endLine ≥ startLine, as code scanning requires.
func sarifLocationOf(path string, start, end int) sarifLocation {
	start = max(start, 1)
	end = max(end, start)
	return sarifLocation{PhysicalLocation: sarifPhysical{
		ArtifactLocation: sarifArtifact{URI: artifactURI(path), URIBaseID: sarifSrcRoot},
		Region:           sarifRegion{StartLine: start, EndLine: end},
	}}
}

// artifactURI is a repository-relative path as a relative URI reference,
// without a leading "./" or "/": every byte but the unreserved characters
// of RFC 3986 and "/" percent-encoded (SARIF 2.1.0 §3.10), so that the URI
// decodes to the path byte for byte, whatever it holds (bytes that are not
// UTF-8, newlines, bidi controls), and a colon cannot read as a scheme.
func artifactURI(path string) string {
	const hex = "0123456789ABCDEF"
	p := strings.TrimLeft(strings.TrimPrefix(path, "./"), "/")
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
