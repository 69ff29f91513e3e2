package eval_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/eval"
	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/evalmodel"
	"github.com/org/warden/internal/gitrepo"
)

// publicCorpus is the shipped corpus of public changes.
const publicCorpus = "corpus/public.toml"

// The corpus's promises: how many cases, from how many repositories and
// languages, under which licences, labelled with which categories.
var (
	permissive = []string{"MIT", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "ISC", "Unlicense OR MIT", "MIT OR Apache-2.0"}
	categories = []string{"bug", "security", "compatibility", "performance", "concurrency", "resource-leak"}
)

// TestPublicCorpusFile checks the shipped corpus file without any network:
// it reads strictly, holds at least 20 defect cases from at least 5
// repositories in at least 3 languages and at least 10 clean cases, each
// under a permissive licence, labelled from the category vocabulary, with a
// one-line description of its own (no two alike, none longer than 240
// characters). What it holds besides pointers is our labels and our
// words: the history check (TestPublicCorpusHistory) compares the words
// with the referenced commits.
func TestPublicCorpusFile(t *testing.T) {
	t.Parallel()
	pf, err := eval.ReadPointers(publicCorpus)
	if err != nil {
		t.Fatal(err)
	}
	defects, clean := 0, 0
	repos, langs, seen := map[string]bool{}, map[string]bool{}, map[string]string{}
	for _, p := range pf.Cases {
		if len(p.Findings) == 0 {
			clean++
		} else {
			defects++
			repos[p.Repository], langs[p.Language] = true, true
		}
		if !slices.Contains(permissive, p.License) {
			t.Errorf("case %s: licence %q is not one of %q", p.Name, p.License, permissive)
		}
		if !strings.HasPrefix(p.Repository, "https://github.com/") || !strings.HasSuffix(p.Repository, ".git") {
			t.Errorf("case %s: repository %q: want a public https clone URL", p.Name, p.Repository)
		}
		if n := len(p.Description); n > 240 {
			t.Errorf("case %s: description of %d characters, want one line of at most 240", p.Name, n)
		}
		if other, dup := seen[p.Description]; dup {
			t.Errorf("cases %s and %s have the same description", other, p.Name)
		}
		seen[p.Description] = p.Name
		for _, k := range p.Findings {
			if !slices.Contains(categories, k.Category) {
				t.Errorf("case %s: category %q is not one of %q", p.Name, k.Category, categories)
			}
		}
	}
	if defects < 20 || len(repos) < 5 || len(langs) < 3 || clean < 10 {
		t.Errorf("%d defect cases from %d repositories in %d languages, %d clean; want at least 20, 5, 3 and 10", defects, len(repos), len(langs), clean)
	}
	t.Logf("%d defect cases from %d repositories in %d languages (%v), %d clean", defects, len(repos), len(langs), keys(langs), clean)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// publicEnabled skips a test that reaches the referenced repositories
// unless scripts/check-eval-corpus.sh asked for it: git reaches them
// through the user's own configuration (a url.<base>.insteadOf to local
// mirrors keeps it offline).
func publicEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv("WARDEN_EVAL_PUBLIC_CORPUS") == "" {
		t.Skip("reaches the corpus's repositories: run scripts/check-eval-corpus.sh")
	}
}

// TestPublicCorpus materialises every case of the shipped corpus with the
// user's git (WARDEN_EVAL_CACHE_DIR, else a temporary cache), records a run
// of the scripted test reviewer, and replays it twice: the same scores
// both times. It logs the figures (cases, time) the README reports.
func TestPublicCorpus(t *testing.T) {
	publicEnabled(t)
	cache := os.Getenv("WARDEN_EVAL_CACHE_DIR")
	if cache == "" {
		cache = t.TempDir()
	}
	start := time.Now()
	cases, err := eval.Sources{Cache: cache, Progress: func(m string) { t.Log(m) }}.Load(context.Background(), []string{publicCorpus})
	if err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	pf, err := eval.ReadPointers(publicCorpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != len(pf.Cases) {
		t.Fatalf("%d cases materialised, the corpus has %d", len(cases), len(pf.Cases))
	}
	changed, files := 0, 0
	for _, c := range cases {
		changed += c.Changed
		files += len(c.Files)
	}
	rec := t.TempDir()
	sks := skillsOf(t, shipped)
	run := func(rt execution.Route, tape *eval.Tape) (string, *eval.Result) {
		res, err := eval.Run(context.Background(), cases, eval.Options{Skills: sks, Routes: []execution.Route{rt}, Policy: execution.DefaultPolicy(), Tape: tape})
		if err != nil {
			t.Fatal(err)
		}
		return jsonOf(t, res, nil), res
	}
	run(scriptedRoute(t), eval.NewTape(eval.ModeRecorded, rec, evalmodel.Producer))
	first, res := run(replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	second, _ := run(replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	if first != second {
		t.Errorf("two replays of the public corpus differ:\n%s", cmp.Diff(first, second))
	}
	if s := res.Scores[0]; s.Failed != 0 || s.Misses != 0 {
		t.Errorf("replay: %d of %d items failed, %d misses", s.Failed, s.Items, s.Misses)
	}
	t.Logf("materialised %d cases (%d files, %d added lines) in %v; %d items recorded and replayed twice with the same scores",
		len(cases), files, changed, loaded.Round(time.Millisecond), res.Scores[0].Items)
}

// TestPublicCorpusHistory checks every case against its repository's
// whole history (cloned bare into a temporary directory with the user's
// git): the parent is the change's first parent; each fix comes after the
// change; the lines a fix removes or rewrites that git blame (in the fix's
// parent) gives to the change fall inside that finding's labelled range,
// at least one of them; a labelled range starts and ends on lines the
// change adds and lies within its hunks; a
// clean case's added source lines all still stand, unchanged, at the
// default branch; the licence file says the named licence; and no
// description shares a sequence of five words with the messages of the
// change, its parent or its fixes, or with the text of their diffs.
func TestPublicCorpusHistory(t *testing.T) {
	publicEnabled(t)
	pf, err := eval.ReadPointers(publicCorpus)
	if err != nil {
		t.Fatal(err)
	}
	root, clones := t.TempDir(), map[string]string{}
	for _, p := range pf.Cases {
		t.Run(p.Name, func(t *testing.T) {
			dir, ok := clones[p.Repository]
			if !ok {
				dir = filepath.Join(root, fmt.Sprintf("repo%d.git", len(clones)))
				if out, err := exec.Command("git", "clone", "--quiet", "--bare", p.Repository, dir).CombinedOutput(); err != nil {
					t.Fatalf("git clone %s: %v\n%s", p.Repository, err, out)
				}
				clones[p.Repository] = dir
			}
			h := history{t: t, dir: dir}
			if got := h.git("rev-parse", p.Commit+"^1"); got != p.Parent {
				t.Errorf("the first parent of %s is %s, the case says %s", p.Commit, got, p.Parent)
			}
			added := h.added(p.Parent, p.Commit)
			for i, k := range p.Findings {
				fix := cmpOr(k.Fix, p.Fix)
				h.checkFix(p, fix, i, k)
				for n := k.StartLine; n <= k.EndLine; n++ {
					if add, inHunk := added[k.Path][n]; !inHunk || (!add && (n == k.StartLine || n == k.EndLine)) {
						t.Errorf("findings[%d]: %s:%d is not a line the change adds (a range starts and ends on added lines, within the change's hunks)", i, k.Path, n)
					}
				}
			}
			if len(p.Findings) == 0 {
				h.checkClean(p, added)
			}
			h.checkLicence(p.License)
			texts := []string{h.git("log", "-1", "--format=%B", p.Commit), h.git("log", "-1", "--format=%B", p.Parent), h.git("show", "--format=", p.Commit)}
			for _, fix := range p.Fixes() {
				texts = append(texts, h.git("log", "-1", "--format=%B", fix), h.git("show", "--format=", fix))
			}
			if seq := sharedWords(p.Description, texts, 5); seq != "" {
				t.Errorf("the description shares %q with the commits' messages or diffs: write it in other words", seq)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// history runs git in a full bare clone.
type history struct {
	t   *testing.T
	dir string
}

func (h history) git(args ...string) string {
	h.t.Helper()
	return strings.TrimSpace(h.raw(args...))
}

// raw is git's output as it is (a diff's context line may be a lone space).
func (h history) raw(args ...string) string {
	h.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", h.dir}, args...)...).Output()
	if err != nil {
		h.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// added are the new-side lines of a change's hunks, by path, true for
// those it adds, as warden's review sees the change.
func (h history) added(parent, commit string) map[string]map[int]bool {
	h.t.Helper()
	files, err := hunks.Parse(strings.NewReader(h.raw(append(gitrepo.DiffArgs, parent, commit, "--")...)))
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]map[int]bool{}
	for _, f := range files {
		out[f.NewPath] = map[int]bool{}
		for _, fr := range f.Fragments {
			n := fr.NewStart
			for _, l := range fr.Lines {
				if l.Op == hunks.Delete {
					continue
				}
				out[f.NewPath][n] = l.Op == hunks.Add
				n++
			}
		}
	}
	return out
}

var porcelain = regexp.MustCompile(`(?m)^([0-9a-f]{40}) (\d+) \d+`)

// checkFix: fix comes after the change, and of the lines it removes or
// rewrites, those git blame gives to the change lie in the finding's range
// (at least one does).
func (h history) checkFix(p eval.Pointer, fix string, i int, k eval.Known) {
	h.t.Helper()
	if _, err := exec.Command("git", "-C", h.dir, "merge-base", "--is-ancestor", p.Commit, fix).Output(); err != nil {
		h.t.Errorf("findings[%d]: fix %s does not come after the change %s", i, fix, p.Commit)
		return
	}
	inside, outside := 0, []string{}
	for path, lines := range h.removed(fix) {
		for _, n := range lines {
			b := h.git("blame", "--porcelain", "-L", fmt.Sprintf("%d,%d", n, n), fix+"^", "--", path)
			m := porcelain.FindStringSubmatch(b)
			from := regexp.MustCompile(`(?m)^filename (.*)$`).FindStringSubmatch(b)
			if m == nil || m[1] != p.Commit || from == nil || from[1] != k.Path {
				continue
			}
			line, _ := strconv.Atoi(m[2])
			if line >= k.StartLine && line <= k.EndLine {
				inside++
			} else if !slices.ContainsFunc(p.Findings, func(o eval.Known) bool {
				return o.Path == k.Path && cmpOr(o.Fix, p.Fix) == fix && line >= o.StartLine && line <= o.EndLine
			}) {
				outside = append(outside, fmt.Sprintf("%s:%d", k.Path, line))
			}
		}
	}
	if inside == 0 {
		h.t.Errorf("findings[%d]: fix %s changes no line of %s:%d-%d that the change brought in", i, fix, k.Path, k.StartLine, k.EndLine)
	}
	if len(outside) > 0 {
		h.t.Errorf("findings[%d]: fix %s also changes lines the change brought in outside every labelled range: %v", i, fix, outside)
	}
}

// removed are the old-side lines a commit removes or rewrites, by path.
func (h history) removed(commit string) map[string][]int {
	h.t.Helper()
	out := map[string][]int{}
	path := ""
	hunk := regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? `)
	for _, l := range strings.Split(h.git("show", "--no-renames", "-U0", "--format=", commit), "\n") {
		switch {
		case strings.HasPrefix(l, "--- a/"):
			path = strings.TrimPrefix(l, "--- a/")
		case strings.HasPrefix(l, "--- "):
			path = ""
		}
		if m := hunk.FindStringSubmatch(l); m != nil && path != "" {
			start, _ := strconv.Atoi(m[1])
			n := 1
			if m[2] != "" {
				n, _ = strconv.Atoi(m[2])
			}
			for i := range n {
				out[path] = append(out[path], start+i)
			}
		}
	}
	return out
}

var sourceFile = regexp.MustCompile(`\.(go|py|js|ts|rs)$`)

// checkClean: every line a clean change adds to a source file (tests
// aside) still stands, given to the change by git blame, at the default
// branch; so no later commit, a fix included, has rewritten it.
func (h history) checkClean(p eval.Pointer, added map[string]map[int]bool) {
	h.t.Helper()
	checked := 0
	for path, hunk := range added {
		lines := 0
		for _, add := range hunk {
			if add {
				lines++
			}
		}
		if !sourceFile.MatchString(path) || strings.Contains(path, "test") || lines == 0 {
			continue
		}
		b, err := exec.Command("git", "-C", h.dir, "blame", "--porcelain", "HEAD", "--", path).Output()
		if err != nil {
			h.t.Errorf("clean: %s is gone from the default branch; check the case again", path)
			continue
		}
		kept := 0
		for _, m := range porcelain.FindAllStringSubmatch(string(b), -1) {
			if m[1] == p.Commit {
				kept++
			}
		}
		if kept < lines {
			h.t.Errorf("clean: %d of the %d lines the change adds to %s stand unchanged at the default branch; a later commit rewrote some: check them", kept, lines, path)
		}
		checked++
	}
	if checked == 0 {
		h.t.Errorf("clean: the change adds no source line to check")
	}
}

// licenceMarks are words each licence's text carries.
var licenceMarks = map[string][]string{
	"MIT":              {"Permission is hereby granted, free of charge"},
	"Apache-2.0":       {"Apache License", "Version 2.0"},
	"BSD-3-Clause":     {"Redistribution and use in source and binary forms", "Neither the name"},
	"Unlicense OR MIT": {"unencumbered software released into the public domain", "Permission is hereby granted, free of charge"},
}

// checkLicence: the default branch's licence files say the named licence.
func (h history) checkLicence(spdx string) {
	h.t.Helper()
	var text strings.Builder
	for _, name := range strings.Split(h.git("ls-tree", "--name-only", "HEAD"), "\n") {
		if l := strings.ToLower(name); strings.HasPrefix(l, "license") || strings.HasPrefix(l, "unlicense") || strings.HasPrefix(l, "copying") {
			text.WriteString(h.git("show", "HEAD:"+name))
		}
	}
	marks, ok := licenceMarks[spdx]
	if !ok {
		h.t.Errorf("licence %q: no marks to check it by", spdx)
	}
	for _, m := range marks {
		if !strings.Contains(strings.Join(strings.Fields(text.String()), " "), m) {
			h.t.Errorf("licence %q: the repository's licence files do not say %q", spdx, m)
		}
	}
}

var wordRE = regexp.MustCompile(`[a-z0-9]+`)

// sharedWords is the first sequence of n words of s that also occurs in
// one of texts (lower-case, punctuation and layout ignored); "" for none.
func sharedWords(s string, texts []string, n int) string {
	words := wordRE.FindAllString(strings.ToLower(s), -1)
	hay := make([]string, len(texts))
	for i, t := range texts {
		hay[i] = " " + strings.Join(wordRE.FindAllString(strings.ToLower(t), -1), " ") + " "
	}
	for i := 0; i+n <= len(words); i++ {
		seq := strings.Join(words[i:i+n], " ")
		for _, h := range hay {
			if strings.Contains(h, " "+seq+" ") {
				return seq
			}
		}
	}
	return ""
}

// TestSharedWords: the check finds a five-word run shared through case,
// punctuation and line breaks, and passes four words or rephrased text.
func TestSharedWords(t *testing.T) {
	t.Parallel()
	msg := "Fix the Loop:\nbound goes one past the end."
	tests := []struct{ desc, want string }{
		{"the loop bound goes one past the end", "the loop bound goes one"},
		{"THE LOOP, BOUND goes", ""},
		{"the index runs a step too far", ""},
	}
	for _, tt := range tests {
		if got := sharedWords(tt.desc, []string{msg}, 5); got != tt.want {
			t.Errorf("sharedWords(%q) = %q, want %q", tt.desc, got, tt.want)
		}
	}
}
