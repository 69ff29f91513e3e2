package eval

import (
	"encoding/json"
	"fmt"
	"os"
)

// Thresholds are how much worse a run may be than its baseline before
// Compare calls it a regression.
type Thresholds struct {
	// Ratio is the largest drop allowed in recall, precision and
	// localisation, as a fraction (0.05: five points).
	Ratio float64
	// Noise is the largest rise allowed in findings per 100 changed lines
	// of clean cases.
	Noise float64
}

// DefaultThresholds: five points of recall, precision or localisation, or
// one more finding per 100 clean changed lines.
var DefaultThresholds = Thresholds{Ratio: 0.05, Noise: 1.0}

// Check refuses thresholds Compare cannot mean: a Ratio outside 0 to 1, a
// negative Noise. Its messages name the command line's flags.
func (th Thresholds) Check() error {
	switch {
	case th.Ratio < 0 || th.Ratio > 1:
		return fmt.Errorf("--max-regression %v: want a fraction from 0 to 1", th.Ratio)
	case th.Noise < 0:
		return fmt.Errorf("--max-noise-increase %v: want a number of findings, 0 or more", th.Noise)
	}
	return nil
}

// Regression is one way a run is worse than its baseline.
type Regression struct {
	Skill  string `json:"skill"`
	Route  string `json:"route"`
	Model  string `json:"model"`
	Metric string `json:"metric"`
	// Base and Current are the metric's values; a missing score or a
	// ratio that no longer has a value is Problem.
	Base    float64 `json:"base"`
	Current float64 `json:"current"`
	Problem string  `json:"problem"`
}

// Comparison is a run against its baseline.
type Comparison struct {
	BaseMode    Mode         `json:"base_mode"`
	Thresholds  Thresholds   `json:"thresholds"`
	Regressions []Regression `json:"regressions"`
}

// ReadResult reads a Result written as JSON (a baseline); an error names
// the file.
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("baseline %s: not an eval result: %v", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("baseline %s: schema %q, want %q (write it with warden eval --format json)", path, r.Schema, Schema)
	}
	return &r, nil
}

// Compare lists how cur is worse than base beyond th: for every score of
// base (by skill, route and model), a drop in recall, precision or
// localisation by more than th.Ratio, a rise in noise by more than
// th.Noise, a score that is gone, or one that is incomplete.
func Compare(base, cur *Result, th Thresholds) Comparison {
	c := Comparison{BaseMode: base.Mode, Thresholds: th, Regressions: []Regression{}}
	for _, b := range base.Scores {
		s := find(cur, b)
		reg := Regression{Skill: b.Skill, Route: b.Route, Model: b.Model}
		if s == nil {
			reg.Metric, reg.Problem = "score", "not measured in this run"
			c.Regressions = append(c.Regressions, reg)
			continue
		}
		if !s.Complete() {
			reg.Metric, reg.Problem = "items", fmt.Sprintf("%d of %d items got no answer", s.Failed, s.Items)
			c.Regressions = append(c.Regressions, reg)
		}
		drop := func(metric string, bv, cv *float64) {
			r := reg
			r.Metric = metric
			switch {
			case bv == nil:
				return
			case cv == nil:
				r.Base, r.Problem = *bv, "no value in this run"
			case *bv-*cv > th.Ratio+1e-9:
				r.Base, r.Current, r.Problem = *bv, *cv, fmt.Sprintf("fell by %.2f (more than %.2f)", *bv-*cv, th.Ratio)
			default:
				return
			}
			c.Regressions = append(c.Regressions, r)
		}
		drop("recall", b.Recall, s.Recall)
		drop("precision", b.Precision, s.Precision)
		drop("localisation", b.Localisation, s.Localisation)
		if b.NoisePer100 != nil && s.NoisePer100 != nil && *s.NoisePer100-*b.NoisePer100 > th.Noise+1e-9 {
			r := reg
			r.Metric, r.Base, r.Current = "noise_per_100_lines", *b.NoisePer100, *s.NoisePer100
			r.Problem = fmt.Sprintf("rose by %.2f (more than %.2f)", *s.NoisePer100-*b.NoisePer100, th.Noise)
			c.Regressions = append(c.Regressions, r)
		}
	}
	return c
}

func find(r *Result, b Score) *Score {
	for i := range r.Scores {
		if s := &r.Scores[i]; s.Skill == b.Skill && s.Route == b.Route && s.Model == b.Model {
			return s
		}
	}
	return nil
}
