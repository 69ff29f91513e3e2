package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Label is the line every rendering of a result starts with: where its
// answers came from, and what the corpus can say.
func (r *Header) Label() string {
	var b strings.Builder
	switch r.Mode {
	case ModeReplayed:
		b.WriteString("replayed: no model was called; every answer is from a recording")
	case ModeRecorded:
		b.WriteString("live, recorded")
	default:
		b.WriteString("live")
	}
	if len(r.Producers) > 0 {
		fmt.Fprintf(&b, " (answers by %s)", strings.Join(r.Producers, ", "))
	}
	if r.Synthetic {
		b.WriteString("; synthetic corpus: these figures check warden's mechanics, they are not a measure of any model's or skill's quality")
	}
	return b.String()
}

// WriteJSON writes the result (and the comparison, when there is one) as
// indented JSON.
func WriteJSON(w io.Writer, r *Result, c *Comparison) error {
	v := any(r)
	if c != nil {
		v = struct {
			*Result
			Label      string      `json:"label"`
			Comparison *Comparison `json:"comparison"`
		}{r, r.Label(), c}
	} else {
		v = struct {
			*Result
			Label string `json:"label"`
		}{r, r.Label()}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

func per100(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *v)
}

// WriteText writes the result for a terminal.
func WriteText(w io.Writer, r *Result, c *Comparison) error {
	ew := &errWriter{w: w}
	clean := 0
	for _, cs := range r.Cases {
		if cs.Clean {
			clean++
		}
	}
	ew.printf("warden eval: %d cases (%d with known findings, %d clean)\n", len(r.Cases), len(r.Cases)-clean, clean)
	ew.printf("%s\n\n", r.Label())
	for _, s := range r.Scores {
		ew.printf("%s on %s (%s): %d cases, %d items", s.Skill, s.Route, s.Model, s.Cases, s.Items)
		if s.Failed > 0 {
			ew.printf(", INCOMPLETE: %d failed", s.Failed)
			if s.Misses > 0 {
				ew.printf(" (%d not in the recording)", s.Misses)
			}
		}
		ew.printf("\n  recall %s (%d/%d)  precision %s (%d/%d)  localisation %s (%d/%d)  noise %s per 100 clean lines (%d in %d)  clean-region hits %d\n",
			pct(s.Recall), s.Detected, s.Known, pct(s.Precision), s.Matched, s.Findings, pct(s.Localisation), s.Localised, s.Detected,
			per100(s.NoisePer100), s.CleanFindings, s.CleanChanged, s.CleanRegionHits)
		if s.Rejected > 0 {
			ew.printf("  the verifier rejected %d findings (not scored)\n", s.Rejected)
		}
		ew.printf("  tokens %d in, %d out  cost $%.4f  model time %.1fs\n", s.PromptTokens, s.CompletionTokens, s.CostUSD, float64(s.ModelTimeMS)/1000)
		for _, pc := range s.PerCase {
			for _, k := range pc.Missed {
				ew.printf("  missed: %s %s:%d-%d (%s, %s)\n", pc.Case, k.Path, k.StartLine, k.EndLine, k.Category, k.Severity)
			}
		}
	}
	writeComparisonText(ew, c)
	return ew.err
}

func writeComparisonText(ew *errWriter, c *Comparison) {
	if c == nil {
		return
	}
	if len(c.Regressions) == 0 {
		ew.printf("\nbaseline (%s): no regression beyond %.2f in a ratio or %.2f in noise\n", c.BaseMode, c.Thresholds.Ratio, c.Thresholds.Noise)
		return
	}
	ew.printf("\nbaseline (%s): %d regressions\n", c.BaseMode, len(c.Regressions))
	for _, g := range c.Regressions {
		ew.printf("  REGRESSION %s on %s (%s): %s %s", g.Skill, g.Route, g.Model, g.Metric, g.Problem)
		if g.Base != 0 || g.Current != 0 {
			ew.printf(": %.2f → %.2f", g.Base, g.Current)
		}
		ew.printf("\n")
	}
}

// WriteMarkdown writes the result as a Markdown table.
func WriteMarkdown(w io.Writer, r *Result, c *Comparison) error {
	ew := &errWriter{w: w}
	ew.printf("## warden eval\n\n> %s\n\n", r.Label())
	ew.printf("| skill | route (model) | cases | recall | precision | localisation | noise /100 clean lines | clean-region hits | tokens in/out | cost | model time | complete |\n")
	ew.printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Scores {
		complete := "yes"
		if !s.Complete() {
			complete = fmt.Sprintf("no: %d of %d items failed", s.Failed, s.Items)
		}
		ew.printf("| %s | %s (%s) | %d | %s (%d/%d) | %s (%d/%d) | %s (%d/%d) | %s | %d | %d/%d | $%.4f | %.1fs | %s |\n",
			mdCell(s.Skill), mdCell(s.Route), mdCell(s.Model), s.Cases, pct(s.Recall), s.Detected, s.Known, pct(s.Precision), s.Matched, s.Findings,
			pct(s.Localisation), s.Localised, s.Detected, per100(s.NoisePer100), s.CleanRegionHits, s.PromptTokens, s.CompletionTokens,
			s.CostUSD, float64(s.ModelTimeMS)/1000, complete)
	}
	if c != nil {
		ew.printf("\n### Against the baseline (%s)\n\n", c.BaseMode)
		if len(c.Regressions) == 0 {
			ew.printf("No regression beyond %.2f in a ratio or %.2f in noise.\n", c.Thresholds.Ratio, c.Thresholds.Noise)
		}
		for _, g := range c.Regressions {
			ew.printf("- **regression**: %s on %s (%s): %s %s (%.2f → %.2f)\n", mdCell(g.Skill), mdCell(g.Route), mdCell(g.Model), g.Metric, g.Problem, g.Base, g.Current)
		}
	}
	return ew.err
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
