package review

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/skills"
)

var tagRE = regexp.MustCompile(`UNTRUSTED-[0-9A-F]{12}`)

// TestSystemMessageIsStatic: the system message of every item of one skill
// (or of one batch of skills) is byte-identical, holds nothing about the
// item, and comes first; the user message names no file but its own.
func TestSystemMessageIsStatic(t *testing.T) {
	t.Parallel()
	_, hp, _ := fixture(t, fixtureFiles, hunks.Options{})
	var paths []string
	for _, f := range fixtureFiles {
		paths = append(paths, f.path)
	}
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch_skills=%v", batch), func(t *testing.T) {
			t.Parallel()
			eng := newEngine(t, &fakeModel{}, nil, nil)
			p, err := NewPlan(hp, eng, Options{Skills: builtins(), Change: fixturePR, BatchSkills: batch})
			if err != nil {
				t.Fatal(err)
			}
			system := map[string]string{} // skills of the request → its system message
			schema := map[string]*execution.Schema{}
			for i, wi := range p.Items {
				key := wi.Skill.Name
				if batch {
					key = "code-review+security-review"
				}
				msgs := wi.Request.Messages
				if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
					t.Fatalf("item %d: messages %v, want system then user", i, msgs)
				}
				sys := msgs[0].Content
				if prev, ok := system[key]; ok && prev != sys {
					t.Errorf("item %d (%s): system message differs from the first item's of the same skills", i, key)
				}
				if prev, ok := schema[key]; ok && prev != wi.Request.Schema {
					t.Errorf("item %d (%s): schema is not the shared one", i, key)
				}
				system[key], schema[key] = sys, wi.Request.Schema
				for _, path := range paths {
					if strings.Contains(sys, path) {
						t.Errorf("item %d: system message names the file %s", i, path)
					}
					if path != wi.Chunk.Path && strings.Contains(msgs[1].Content, path) {
						t.Errorf("item %d (%s): user message names another file, %s", i, wi.Chunk.Path, path)
					}
				}
				if tagRE.MatchString(sys) || strings.Contains(sys, fmt.Sprintf("%d to %d", wi.Chunk.StartLine, wi.Chunk.EndLine)) {
					t.Errorf("item %d: system message holds the item's fence tag or line range", i)
				}
			}
			if want := map[bool]int{false: 2, true: 1}[batch]; len(system) != want {
				t.Errorf("%d distinct system messages, want %d", len(system), want)
			}
		})
	}
}

// naivePrompts builds the requests of reviewers in this field: one per skill
// and hunk (no coalescing), 20 context lines each side, and in every request
// the whole pull request description and the list of every file in it. The
// skill's instructions and output contract are warden's own, so that the
// comparison measures what is sent around them.
func naivePrompts(t testing.TB, files []*hunks.File, sks []*skills.Skill, change Change) []*execution.Request {
	t.Helper()
	_, hp, _ := fixture(t, fixtureFiles, hunks.Options{CoalesceGap: 1, FullContext: true, ContextLines: 20})
	var list strings.Builder
	for _, f := range files {
		add, del := 0, 0
		for _, fr := range f.Fragments {
			for _, l := range fr.Lines {
				switch l.Op {
				case hunks.Add:
					add++
				case hunks.Delete:
					del++
				}
			}
		}
		fmt.Fprintf(&list, "- %s (+%d -%d)\n", f.Path(), add, del)
	}
	var out []*execution.Request
	for ci := range hp.Chunks {
		c := &hp.Chunks[ci]
		for _, sk := range sks {
			user := fmt.Sprintf("Pull request: %s\n\n%s\n\nFiles changed in this pull request:\n%s\nReview this hunk of %s (lines %d to %d):\n\n%s",
				change.Title, change.Body, list.String(), c.Path, c.StartLine, c.EndLine, renderChange(c, Change{}))
			out = append(out, &execution.Request{Messages: []execution.Message{
				{Role: "system", Content: systemMessage([]*skills.Skill{sk}, nil)},
				{Role: "user", Content: user},
			}})
		}
	}
	return out
}

// promptStats measures requests: how many, their characters, and the
// characters no earlier request shares as a prefix (what a provider's
// prefix cache cannot serve, ignoring its minimum length and eviction).
func promptStats(reqs []*execution.Request) (n, chars, uncached int) {
	var seen []string
	for _, r := range reqs {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Content)
			b.WriteByte(0)
		}
		s := b.String()
		shared := 0
		for _, prev := range seen {
			k := 0
			for k < len(s) && k < len(prev) && s[k] == prev[k] {
				k++
			}
			shared = max(shared, k)
		}
		seen = append(seen, s)
		n, chars, uncached = n+1, chars+len(s)-len(r.Messages), uncached+len(s)-shared
	}
	return n, chars, uncached
}

// planRequests returns a plan's distinct requests, in order.
func planRequests(p *Plan) []*execution.Request {
	var out []*execution.Request
	for i, wi := range p.Items {
		if i == 0 || wi.Request != p.Items[i-1].Request {
			out = append(out, wi.Request)
		}
	}
	return out
}

// TestPromptSizeComparison measures the fixture change's requests and
// prompt characters with warden's prompts (one request per skill and chunk,
// and with batch_skills) against the naive builder, and logs the table.
func TestPromptSizeComparison(t *testing.T) {
	t.Parallel()
	files, hp, _ := fixture(t, fixtureFiles, hunks.Options{})
	_, full, _ := fixture(t, fixtureFiles, hunks.Options{FullContext: true})
	sks := builtins()
	eng := newEngine(t, &fakeModel{}, nil, nil)
	type row struct {
		name                   string
		requests, chars, unhit int
	}
	naive := row{name: "naive: per skill and hunk, 20 context lines, file list and PR body in each"}
	naive.requests, naive.chars, naive.unhit = promptStats(naivePrompts(t, files, sks, fixturePR))
	rows := []row{naive}
	for _, c := range []struct {
		name  string
		hp    *hunks.Plan
		batch bool
	}{
		{"warden, 20 context lines untrimmed", full, false},
		{"warden (default): context trimmed to the enclosing block", hp, false},
		{"warden, batch_skills = true", hp, true},
	} {
		p, err := NewPlan(c.hp, eng, Options{Skills: sks, Change: fixturePR, BatchSkills: c.batch})
		if err != nil {
			t.Fatal(err)
		}
		r := row{name: c.name}
		r.requests, r.chars, r.unhit = promptStats(planRequests(p))
		rows = append(rows, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nfixture: %d files, %d hunks, %d chunks, skills code-review and security-review\n\n", len(files), naive.requests/len(sks), len(hp.Chunks))
	b.WriteString("| prompts | requests | prompt chars | chars outside a shared prefix | naive ÷ this (requests) | naive ÷ this (chars) | naive ÷ this (outside prefix) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.2f× | %.2f× | %.2f× |\n", r.name, r.requests, r.chars, r.unhit,
			float64(naive.requests)/float64(r.requests), float64(naive.chars)/float64(r.chars), float64(naive.unhit)/float64(r.unhit))
	}
	t.Log(b.String())
	def, batch := rows[2], rows[3]
	if def.chars >= naive.chars || def.requests > naive.requests {
		t.Errorf("warden's prompts: %d requests, %d chars; want fewer than naive's %d, %d", def.requests, def.chars, naive.requests, naive.chars)
	}
	if batch.requests != len(hp.Chunks) || batch.chars >= def.chars {
		t.Errorf("batch_skills: %d requests, %d chars; want %d requests (one per chunk) and fewer than %d chars", batch.requests, batch.chars, len(hp.Chunks), def.chars)
	}
}
