package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/action"
	"github.com/org/warden/internal/fakegithub"
)

// The real pull_request payloads of @octokit/webhooks-examples 7.6.1 (MIT;
// see the NOTICE beside them), committed by internal/fakegithub.
const payloadDir = "../../internal/fakegithub/testdata/webhooks/pull_request"

// examplePayload is one payload file, read whole.
type examplePayload struct {
	name string
	data []byte
}

func examplePayloads(t *testing.T) []examplePayload {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(payloadDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 29 {
		t.Fatalf("%d payloads in %s, want the package's 29", len(paths), payloadDir)
	}
	var out []examplePayload
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, examplePayload{strings.TrimSuffix(filepath.Base(p), ".json"), data})
	}
	return out
}

// payloadFacts is what the payload says, read without go-github so that
// the expectation does not share its decoding with action.ParsePullRequest.
type payloadFacts struct {
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest struct {
		Number            int     `json:"number"`
		AuthorAssociation string  `json:"author_association"`
		Title             string  `json:"title"`
		Body              *string `json:"body"`
		Draft             bool    `json:"draft"`
		User              struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
		Head, Base struct {
			SHA  string `json:"sha"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		}
	} `json:"pull_request"`
	Repository struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
}

func factsOf(t *testing.T, data []byte) payloadFacts {
	t.Helper()
	var f payloadFacts
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.Action == "" || f.Number == 0 || f.Number != f.PullRequest.Number || f.PullRequest.Head.SHA == "" || f.PullRequest.Base.SHA == "" {
		t.Fatalf("payload lacks what every pull_request event has: %+v", f)
	}
	return f
}

// want is the pull request the Action should review for f.
func (f payloadFacts) want() *action.PullRequest {
	p := f.PullRequest
	pr := &action.PullRequest{
		Owner: f.Repository.Owner.Login, Repo: f.Repository.Name,
		Number: p.Number, HeadSHA: p.Head.SHA, BaseSHA: p.Base.SHA,
		Title: p.Title, Draft: p.Draft, Author: p.User.Login,
		Bot:         p.User.Type == "Bot" || strings.HasSuffix(p.User.Login, "[bot]"),
		Fork:        p.Head.Repo != nil && p.Base.Repo != nil && p.Head.Repo.FullName != p.Base.Repo.FullName,
		Association: p.AuthorAssociation,
	}
	if p.Head.Repo != nil {
		pr.HeadRepo = p.Head.Repo.FullName
	}
	if p.Body != nil {
		pr.Body = *p.Body
	}
	return pr
}

// payloadVariants are edits of a real payload into cases the examples lack:
// a pull request from a fork, by a bot, a draft.
var payloadVariants = []struct {
	name string
	edit func(pr map[string]any)
}{
	{"as sent", nil},
	{"from a fork", func(pr map[string]any) {
		head := pr["head"].(map[string]any)
		repo := head["repo"].(map[string]any)
		name := repo["name"].(string)
		repo["full_name"] = "contributor/" + name
		repo["fork"] = true
		repo["owner"].(map[string]any)["login"] = "contributor"
		head["label"] = "contributor:" + head["ref"].(string)
	}},
	{"by a bot", func(pr map[string]any) {
		pr["user"].(map[string]any)["login"] = "dependabot[bot]"
		pr["user"].(map[string]any)["type"] = "Bot"
	}},
	{"draft", func(pr map[string]any) { pr["draft"] = true }},
}

// variant returns the payload with edit applied to its pull_request.
func variant(t *testing.T, data []byte, edit func(pr map[string]any)) []byte {
	t.Helper()
	if edit == nil {
		return data
	}
	var ev map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil {
		t.Fatal(err)
	}
	edit(ev["pull_request"].(map[string]any))
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadEventExamplePayloads runs every real pull_request payload, and
// its variants, through action.ParsePullRequest: the reviewed actions give the pull
// request as the payload describes it, the others errNotReviewed.
func TestReadEventExamplePayloads(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, p := range examplePayloads(t) {
		seen[factsOf(t, p.data).Action] = true
		for _, v := range payloadVariants {
			t.Run(p.name+"/"+v.name, func(t *testing.T) {
				t.Parallel()
				data := variant(t, p.data, v.edit)
				facts := factsOf(t, data)
				ev := action.Event{Name: "pull_request", Path: "event.json", Data: data}
				got, err := action.ParsePullRequest(t.Context(), ev, 0, nil, facts.Repository.Owner.Login, facts.Repository.Name)
				if !action.ReviewedActions[facts.Action] {
					var skip *action.NotReviewedError
					if !errors.As(err, &skip) || got != nil {
						t.Fatalf("action.ParsePullRequest(%s) = %+v, %v; want a NotReviewedError", facts.Action, got, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("action.ParsePullRequest(%s) = %v", facts.Action, err)
				}
				if diff := cmp.Diff(facts.want(), got); diff != "" {
					t.Errorf("action.ParsePullRequest(%s) (-want +got):\n%s", facts.Action, diff)
				}
			})
		}
	}
	for name := range action.ReviewedActions {
		if !seen[name] {
			t.Errorf("no example payload has the reviewed action %q", name)
		}
	}
}

// TestActionExamplePayloadsSkip runs `warden action` on the payloads it
// must not review, against the loopback GitHub that checks every call
// against GitHub's REST API description: actions other than the reviewed
// ones exit 0 without a call; drafts and bots get a skipped check run on
// the payload's head SHA. No model is configured: none may be called.
func TestActionExamplePayloadsSkip(t *testing.T) {
	t.Parallel()
	for _, p := range examplePayloads(t) {
		for _, v := range payloadVariants {
			facts := factsOf(t, variant(t, p.data, v.edit))
			reviewed := action.ReviewedActions[facts.Action]
			if reviewed && !facts.PullRequest.Draft && !facts.want().Bot {
				continue // would need a model: action_test.go covers reviews
			}
			t.Run(p.name+"/"+v.name, func(t *testing.T) {
				t.Parallel()
				data := variant(t, p.data, v.edit)
				dir := t.TempDir()
				gh := fakegithub.New(facts.Repository.Owner.Login, facts.Repository.Name)
				env := map[string]string{
					"GITHUB_ACTIONS":      "true",
					"GITHUB_EVENT_NAME":   "pull_request",
					"GITHUB_EVENT_PATH":   filepath.Join(dir, "event.json"),
					"GITHUB_REPOSITORY":   facts.Repository.Owner.Login + "/" + facts.Repository.Name,
					"GITHUB_API_URL":      gh.Start(t).URL,
					"GITHUB_WORKSPACE":    t.TempDir(),
					"GITHUB_OUTPUT":       filepath.Join(dir, "output"),
					"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"),
					"RUNNER_TEMP":         dir,
					"INPUT_GITHUB_TOKEN":  fakegithub.DefaultToken,
				}
				if err := os.WriteFile(env["GITHUB_EVENT_PATH"], data, 0o644); err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
				if code != exitOK {
					t.Fatalf("exit = %d, want %d; stderr:\n%s", code, exitOK, stderr.String())
				}
				out, _ := os.ReadFile(env["GITHUB_OUTPUT"])
				if got := stepOutput(string(out), "outcome"); got != "skipped" {
					t.Errorf("step output outcome = %q, want skipped; GITHUB_OUTPUT:\n%s", got, out)
				}
				runs := gh.CheckRuns()
				if !reviewed {
					if reqs := gh.Requests(); len(reqs) != 0 {
						t.Errorf("action %q made %d GitHub requests, want none", facts.Action, len(reqs))
					}
					return
				}
				if len(runs) != 1 || runs[0].HeadSHA != facts.PullRequest.Head.SHA || runs[0].Conclusion != "skipped" {
					t.Errorf("check runs = %+v, want one skipped on head %s", runs, facts.PullRequest.Head.SHA)
				}
			})
		}
	}
}

// stepOutput reads output name from GITHUB_OUTPUT's contents, written as
// "name=value" or "name<<delimiter\nvalue\ndelimiter".
func stepOutput(file, name string) string {
	lines := strings.Split(file, "\n")
	for i, l := range lines {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			return v
		}
		if delim, ok := strings.CutPrefix(l, name+"<<"); ok {
			var value []string
			for _, v := range lines[i+1:] {
				if v == delim {
					break
				}
				value = append(value, v)
			}
			return strings.Join(value, "\n")
		}
	}
	return ""
}
