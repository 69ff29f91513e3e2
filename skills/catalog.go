package skills

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

//go:embed builtin/*/SKILL.md
var builtinFS embed.FS

// loadBuiltins parses the embedded skills. TestBuiltins makes sure none is
// skipped and none has a warning.
func loadBuiltins() *Found {
	sub, err := fs.Sub(builtinFS, "builtin")
	if err != nil {
		return &Found{Skipped: []Skipped{{File: "builtin", Reason: SkipUnreadable, Problems: Problems{{File: "builtin", Message: err.Error()}}}}}
	}
	d := &discovery{fsys: sub}
	d.scan(".", true)
	f := d.result()
	for _, s := range f.Skills {
		s.Source = "builtin"
	}
	return f
}

// builtins parses the embedded skills once. A built-in that fails to parse
// is left out rather than panicking.
var builtins = sync.OnceValue(func() []*Skill {
	return loadBuiltins().Skills
})

// Builtins returns the skills compiled into warden, sorted by name, with
// Source "builtin". Each call returns new copies that the caller may change.
func Builtins() []*Skill {
	return cloneAll(builtins())
}

func cloneAll(in []*Skill) []*Skill {
	out := make([]*Skill, len(in))
	for i, s := range in {
		out[i] = s.clone()
	}
	return out
}

// Catalog merges a repository's skills with the built-ins: a repository
// skill overrides a built-in of the same name. It returns them sorted by
// name. Nil entries in repo are skipped, and when repo names a skill twice
// the first one wins, as in Discover. The result shares the repository
// skills with repo; the built-ins are new copies.
func Catalog(repo []*Skill) []*Skill {
	byName := map[string]*Skill{}
	for _, s := range repo {
		if s == nil {
			continue
		}
		if _, dup := byName[s.Name]; !dup {
			byName[s.Name] = s
		}
	}
	out := make([]*Skill, 0, len(byName)+2)
	for _, s := range byName {
		out = append(out, s)
	}
	for _, b := range Builtins() {
		if _, overridden := byName[b.Name]; !overridden {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Select returns the skills of all with the given names, in the order given;
// a name given twice is returned once, at its first place. An unknown name is
// an error that lists every unknown name and the known ones. Nil entries in
// all are skipped.
func Select(all []*Skill, names []string) ([]*Skill, error) {
	byName := map[string]*Skill{}
	for _, s := range all {
		if s == nil {
			continue
		}
		if _, dup := byName[s.Name]; !dup {
			byName[s.Name] = s
		}
	}
	var out []*Skill
	var unknown []string
	picked := map[string]bool{}
	for _, n := range names {
		s, ok := byName[n]
		switch {
		case !ok:
			if !slices.Contains(unknown, n) {
				unknown = append(unknown, n)
			}
		case !picked[n]:
			picked[n] = true
			out = append(out, s)
		}
	}
	if len(unknown) > 0 {
		known := make([]string, 0, len(byName))
		for n := range byName {
			known = append(known, n)
		}
		slices.Sort(known)
		list := "none"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		quoted := make([]string, len(unknown))
		for i, n := range unknown {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		noun := "skill"
		if len(unknown) > 1 {
			noun = "skills"
		}
		return nil, fmt.Errorf("unknown %s %s (known: %s)", noun, strings.Join(quoted, ", "), list)
	}
	return out, nil
}
