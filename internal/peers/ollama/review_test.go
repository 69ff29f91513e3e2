package ollama

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// sampleDiff changes three Go files: three chunks, three prompts whose
// ends differ (ollama keeps a prompt's end when it truncates one).
const sampleDiff = `diff --git a/calc/calc.go b/calc/calc.go
index 1111111..2222222 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -1,7 +1,7 @@
 package calc
 
-// Div divides a by b.
-func Div(a, b int) int {
-	return a / b
+// Div divides a by b, or returns 0.
+func Div(a, b int) (int, error) {
+	return a / b, nil
 }
 
diff --git a/store/query.go b/store/query.go
index 3333333..4444444 100644
--- a/store/query.go
+++ b/store/query.go
@@ -10,4 +10,5 @@ func Find(db *sql.DB, name string) (*Row, error) {
 	// Look the row up by name.
-	q := "SELECT * FROM rows WHERE name = ?"
-	return scan(db.Query(q, name))
+	q := "SELECT * FROM rows WHERE name = '" + name + "'"
+	rows, _ := db.Query(q)
+	return scan(rows, nil)
 }
diff --git a/web/handler.go b/web/handler.go
index 5555555..6666666 100644
--- a/web/handler.go
+++ b/web/handler.go
@@ -20,3 +20,4 @@ func (h *Handler) Serve(w http.ResponseWriter, r *http.Request) {
 	name := r.URL.Query().Get("name")
-	fmt.Fprintf(w, "hello %s", html.EscapeString(name))
+	log.Printf("request from %s", name)
+	fmt.Fprintf(w, "hello %s", name)
 }
`

// bugsSkill is a skill with short instructions.
var bugsSkill = &skills.Skill{Name: "bugs", Description: "Find bugs.", Instructions: "Report real bugs only.", Source: "builtin"}

// planReview plans the review of diff with sks on eng.
func planReview(t *testing.T, diff string, hopts hunks.Options, eng *execution.Engine, sks []*skills.Skill, opts review.Options) *review.Plan {
	t.Helper()
	files, err := hunks.Parse(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	hp, err := hunks.Prepare(files, hopts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Skills = sks
	p, err := review.NewPlan(hp, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) == 0 {
		t.Fatal("the plan has no item")
	}
	return p
}

// rawAnswer is a model's answer as it came, for comparing with what
// validation made of it.
type rawAnswer struct {
	Findings []struct {
		Title       string          `json:"title"`
		Description string          `json:"description"`
		StartLine   json.RawMessage `json:"start_line"`
		EndLine     json.RawMessage `json:"end_line"`
	} `json:"findings"`
}

// chatAnswer is what the OpenAI-compatible endpoint answered (not streamed).
type chatAnswer struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// TestReviewSchemaConstrained runs review.Run against the real server: one
// skill on three chunks. Each request carries the strict json_schema
// response_format, which ollama turns into a grammar, so the random model
// can only write JSON of the answer's shape, with nonsense in it: line
// numbers negative, zero or far outside the chunk, confidences that
// overflow a float64, random text. Validation must keep every finding's
// lines inside the chunk and mark (Clamped) exactly the findings it moved.
//
// With the Modelfile's seed the answers are deterministic for a given
// prompt; whether one is cut off by max_tokens (the item fails,
// bad_response) or complete (reviewed) depends on the prompt, so each item
// is checked for the invariants of what it became.
func TestReviewSchemaConstrained(t *testing.T) {
	t.Parallel()
	srv := mainServer(t)
	prov, rec := newProvider(t, srv)
	eng := newEngine(t, []execution.Route{{Name: "ollama", BaseURL: srv.URL + "/v1", Model: tinyModel, Provider: prov}}, nil, execution.Options{})
	p := planReview(t, sampleDiff, hunks.Options{}, eng, []*skills.Skill{bugsSkill}, review.Options{MaxTokens: 1500})
	if len(p.Items) != 3 {
		t.Fatalf("plan has %d items, want 3", len(p.Items))
	}

	r := review.Run(context.Background(), p, eng, review.Options{})

	// The last answer per file, and every request's response_format.
	last := map[string]chatAnswer{}
	for _, ex := range rec.all() {
		var sent struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Name   string          `json:"name"`
					Strict bool            `json:"strict"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(ex.request, &sent); err != nil || len(sent.Messages) == 0 {
			t.Fatalf("request body: %v\n%s", err, ex.request)
		}
		if rf := sent.ResponseFormat; rf.Type != "json_schema" || !rf.JSONSchema.Strict || !strings.Contains(string(rf.JSONSchema.Schema), `"findings"`) {
			t.Errorf("request response_format = %+v, want a strict json_schema with the findings schema", rf)
		}
		var a chatAnswer
		if err := json.Unmarshal(ex.response, &a); err != nil || len(a.Choices) != 1 || a.Choices[0].FinishReason == nil {
			t.Fatalf("answer (status %d) %q: %v", ex.status, ex.response, err)
		}
		for _, wi := range p.Items {
			if strings.Contains(sent.Messages[len(sent.Messages)-1].Content, "File: "+wi.Chunk.Path+"\n") {
				last[wi.Chunk.Path] = a
			}
		}
	}
	if r.Usage.PromptTokens <= 0 || r.Usage.CompletionTokens <= 0 {
		t.Errorf("report usage = %+v, want prompt and completion tokens > 0", r.Usage)
	}

	written := 0
	for _, it := range r.Items {
		a, ok := last[it.Path]
		if !ok {
			t.Errorf("item %s: no answer recorded", it.Path)
			continue
		}
		content, finish := a.Choices[0].Message.Content, *a.Choices[0].FinishReason
		t.Logf("item %s: %s (%s) after %d attempts; last answer: finish_reason %s, usage %+v, %q",
			it.Path, it.Status, it.Reason, len(it.Attempts), finish, a.Usage, content)
		if a.Usage.PromptTokens <= 0 || a.Usage.CompletionTokens <= 0 {
			t.Errorf("item %s: answer usage %+v, want prompt and completion tokens > 0", it.Path, a.Usage)
		}
		switch it.Status {
		case review.StatusReviewed:
			// The grammar made a complete JSON answer: every finding kept,
			// inside the chunk, marked exactly when moved.
			var raw rawAnswer
			if err := json.Unmarshal([]byte(content), &raw); err != nil {
				t.Errorf("item %s: reviewed, but its answer is not JSON: %v", it.Path, err)
				continue
			}
			written += len(raw.Findings)
			kept, moved := 0, 0
			for _, f := range raw.Findings {
				if strings.TrimSpace(f.Title) == "" && strings.TrimSpace(f.Description) == "" {
					continue // validation drops a finding with no text
				}
				kept++
				if outside(f.StartLine, f.EndLine, it.StartLine, it.EndLine) {
					moved++
				}
			}
			got, clamped := 0, 0
			for _, f := range r.Findings {
				if f.Path != it.Path {
					continue
				}
				got++
				if f.StartLine < it.StartLine || f.EndLine > it.EndLine || f.StartLine > f.EndLine {
					t.Errorf("item %s: finding %q at lines %d-%d, outside the chunk %d-%d", it.Path, f.Title, f.StartLine, f.EndLine, it.StartLine, it.EndLine)
				}
				if f.Clamped {
					clamped++
					if f.Suggestion != "" {
						t.Errorf("item %s: clamped finding %q keeps its suggestion %q", it.Path, f.Title, f.Suggestion)
					}
				}
			}
			if got != kept || clamped != moved {
				t.Errorf("item %s: %d findings reported, %d clamped; want %d (of %d written), %d clamped", it.Path, got, clamped, kept, len(raw.Findings), moved)
			}
		case review.StatusFailed:
			// The answer ran into max_tokens before the grammar closed it:
			// a bad response, never "no findings".
			if it.Reason != execution.ClassBadResponse.String() || finish != "length" {
				t.Errorf("item %s: failed (%s) with finish_reason %s; want bad_response after length", it.Path, it.Reason, finish)
			}
		default:
			t.Errorf("item %s: status %s (%s), want reviewed or failed", it.Path, it.Status, it.Reason)
		}
	}
	if written == 0 {
		t.Errorf("the model wrote no finding in %d answers: nothing was validated (change the seed in tinyParams)", len(r.Items))
	}
}

// outside reports whether a finding's lines, as the model wrote them, are
// not a range inside lo..hi, by validation's rules: the end defaults to the
// start, the two are swapped when reversed, and a line is a whole number
// from 1 to 2^31-1.
func outside(startRaw, endRaw json.RawMessage, lo, hi int) bool {
	start, okStart := lineOf(startRaw)
	end, okEnd := lineOf(endRaw)
	if !okEnd {
		end = start
	}
	if start > end {
		start, end = end, start
	}
	return !okStart || start < lo || end > hi
}

// lineOf reads a line number as the model wrote it.
func lineOf(raw json.RawMessage) (int, bool) {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f < 1 || f > 1<<31-1 {
		return 0, false
	}
	return int(f), true
}
