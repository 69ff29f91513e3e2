package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseEventExamples reads GitHub's own example payloads (shipped with
// the fake GitHub): the issue_comment examples are on issues, so they run
// nothing; the same payload on a pull request (issue.pull_request set, as
// GitHub sends it) carries the command; every review comment is on a pull
// request.
func TestParseEventExamples(t *testing.T) {
	t.Parallel()
	for _, event := range []string{EventIssueComment, EventReviewComment} {
		files, _ := filepath.Glob(filepath.Join("..", "internal", "fakegithub", "testdata", "webhooks", event, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no %s examples", event)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := ParseEvent(event, b)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if ev.CommentID == 0 || ev.Comment.Author == "" || ev.Comment.Association == "" || ev.Comment.Action == "" {
				t.Errorf("%s: %+v lacks the comment's id, author, association or action", f, ev)
			}
			if event == EventIssueComment {
				if ev.Comment.OnPullRequest || ev.PullRequest != 0 {
					t.Errorf("%s: an issue's comment read as on a pull request", f)
				}
				// The same comment on a pull request, saying /warden resume.
				var m map[string]any
				json.Unmarshal(b, &m)
				m["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/o/r/pulls/1"}
				m["comment"].(map[string]any)["body"] = "/warden resume"
				onPR, _ := json.Marshal(m)
				ev, err = ParseEvent(event, onPR)
				if err != nil || !ev.Comment.OnPullRequest || ev.PullRequest == 0 {
					t.Errorf("%s on a pull request: %+v, %v", f, ev, err)
				}
				if want := m["issue"].(map[string]any)["user"].(map[string]any)["login"]; ev.Comment.PullRequestAuthor != want {
					t.Errorf("%s on a pull request: author of the pull request %q, want the issue's user %q", f, ev.Comment.PullRequestAuthor, want)
				}
			} else if !ev.ReviewComment || ev.PullRequest == 0 || !ev.Comment.OnPullRequest || ev.Comment.PullRequestAuthor == "" {
				t.Errorf("%s: %+v, want a review comment on a pull request, with its author", f, ev)
			}
			d := Decide(ev.Comment, Policy{})
			if ev.Comment.Action != "created" && d.Verdict != Ignore {
				t.Errorf("%s: a %s comment gave %s, want ignore", f, ev.Comment.Action, d.Verdict)
			}
		}
	}
}

func TestParseEventErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, payload, want string }{
		{"push", `{}`, `event "push" carries no command`},
		{EventIssueComment, `{"action":"created"}`, "no comment in the payload"},
		{EventIssueComment, `{"comment":{"id":1}}`, "names no pull request"},
		{EventReviewComment, `{"comment":{"id":1}}`, "names no pull request"},
		{EventIssueComment, `[`, "unexpected end of JSON"},
	} {
		if _, err := ParseEvent(tt.name, []byte(tt.payload)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseEvent(%s, %s) = %v, want %q", tt.name, tt.payload, err, tt.want)
		}
	}
	ev, err := ParseEvent(EventReviewComment, []byte(`{"action":"created","comment":{"id":5,"in_reply_to_id":3,"body":"/warden dismiss nope","author_association":"OWNER","user":{"login":"o","type":"User"}},"pull_request":{"number":9}}`))
	if err != nil || ev.Comment.ReplyTo != 3 || Decide(ev.Comment, Policy{}).Command.Reason != "nope" {
		t.Errorf("dismiss reply = %+v, %v", ev, err)
	}
}
