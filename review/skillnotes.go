package review

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/org/warden/skills"
)

// SkippedSkill is a skill file of the repository that the review did not
// run, and why (additive to the contract). A broken skill, or an agent's
// skill that is not a review skill, is skipped, never fatal, unless it was
// asked for by name.
type SkippedSkill struct {
	Skill string `json:"skill,omitempty"` // the name its path gives
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	// Reason is not_review (an agent's skill that does not declare itself
	// a review skill), invalid, duplicate or unreadable.
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// SkillWarning is something odd in a skill that runs (a frontmatter key
// warden does not read): it is ignored, and the skill runs.
type SkillWarning struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// skillNotes are found's skipped files and warnings as the report lists
// them. A skipped file whose name is a built-in's says that the built-in
// runs instead.
func skillNotes(found *skills.Found) ([]SkippedSkill, []SkillWarning) {
	var skipped []SkippedSkill
	var warnings []SkillWarning
	builtin := map[string]bool{}
	for _, b := range skills.Builtins() {
		builtin[b.Name] = true
	}
	for _, s := range found.Skipped {
		p := s.Summary()
		msg := p.Message
		if builtin[s.Name] && !slices.ContainsFunc(found.Skills, func(sk *skills.Skill) bool { return sk.Name == s.Name }) {
			msg += "; the built-in " + s.Name + " runs instead"
		}
		skipped = append(skipped, SkippedSkill{Skill: s.Name, File: s.File, Line: p.Line, Reason: string(s.Reason), Message: msg})
	}
	for _, w := range found.Warnings {
		warnings = append(warnings, SkillWarning{File: w.File, Line: w.Line, Message: w.Message})
	}
	return skipped, warnings
}

// skillProblems are the skipped files and the warnings as one problem
// each, for a warning on the log.
func skillProblems(skipped []SkippedSkill, warnings []SkillWarning) skills.Problems {
	var out skills.Problems
	for _, s := range skipped {
		out = append(out, skills.Problem{File: s.File, Line: s.Line, Message: "skill skipped: " + s.Message})
	}
	for _, w := range warnings {
		out = append(out, skills.Problem{File: w.File, Line: w.Line, Message: w.Message})
	}
	return out
}

// namedSkippedError is the error for skills asked for by name (flags, the
// Action's input, [[skills]]) that were found and skipped: one asked for
// by name must run, or the review says why not and stops.
func namedSkippedError(found *skills.Found, names []string) error {
	for _, n := range names {
		if slices.ContainsFunc(found.Skills, func(sk *skills.Skill) bool { return sk.Name == n }) {
			continue
		}
		s, ok := found.SkippedNamed(n)
		if !ok {
			continue
		}
		if s.Reason == skills.SkipNotReview {
			return fmt.Errorf("skill %q: %s is not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it)", n, s.File)
		}
		msgs := make([]string, len(s.Problems))
		for i, p := range s.Problems {
			msgs[i] = p.Error()
		}
		return fmt.Errorf("skill %q cannot run: %s", n, strings.Join(msgs, "; "))
	}
	return nil
}

// chooseSkills is ChooseSkills with what discovery found.
func chooseSkills(dir fs.FS, configured []SkillSetting, names []string) ([]*skills.Skill, *skills.Found, error) {
	overrides := map[string]SkillSetting{}
	var listed []string
	for _, s := range configured {
		overrides[s.Name] = s
		listed = append(listed, s.Name)
	}
	if len(names) == 0 {
		names = listed
	}
	found := skills.Discover(dir)
	if err := namedSkippedError(found, names); err != nil {
		return nil, nil, err
	}
	chosen := skills.Catalog(found.Skills)
	if len(names) > 0 {
		var err error
		if chosen, err = skills.Select(chosen, names); err != nil {
			return nil, nil, err
		}
	}
	out := make([]*skills.Skill, len(chosen))
	for i, sk := range chosen {
		c := *sk
		if ov, ok := overrides[sk.Name]; ok {
			if ov.Paths != nil {
				c.Paths = ov.Paths
			}
			if ov.Ignore != nil {
				c.Ignore = ov.Ignore
			}
		}
		out[i] = &c
	}
	return out, found, nil
}
