package act

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
)

// TestCommentWorkflowUnderAct runs the README's comment workflow
// (warden-commands.yml, read out of README.md) under act on an
// issue_comment event (GitHub's example payload, on the pull request,
// saying /warden resume), with a GITHUB_TOKEN of exactly the workflow's
// permissions: warden reacts to the comment, reviews the pull request with
// the base repository's configuration and completes a check run on its
// head.
func TestCommentWorkflowUnderAct(t *testing.T) {
	needAct(t)
	ctx, cancel := context.WithTimeout(t.Context(), actDeadln)
	defer cancel()
	w := lifeWorld(t)
	w.use(readmeWorkflow(t, wfCommands), false)
	w.checkout = w.pr.BaseSHA
	id := w.gh.AddIssueComment(prNumber, fakegithub.IssueComment{Body: "/warden resume", User: "alice", Association: "MEMBER"})
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "fakegithub", "testdata", "webhooks", "issue_comment", "01-created.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	issue := ev["issue"].(map[string]any)
	issue["number"] = prNumber
	issue["pull_request"] = map[string]any{"url": w.ghURL + "/repos/" + owner + "/" + repoName + "/pulls/" + itoa(prNumber)}
	c := ev["comment"].(map[string]any)
	c["id"], c["body"], c["author_association"] = id, "/warden resume", "MEMBER"
	c["user"].(map[string]any)["login"] = "alice"
	ev["repository"] = map[string]any{"full_name": owner + "/" + repoName, "name": repoName, "owner": map[string]any{"login": owner}}
	data, _ := json.Marshal(ev)
	if err := os.WriteFile(filepath.Join(w.dir, "event.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	w.eventName = "issue_comment"

	res := w.runAct(ctx)
	if res.err != nil || !strings.Contains(res.log, "Job succeeded") {
		t.Fatalf("act: %v\n%s", res.err, res.log)
	}
	var reactions []string
	for _, r := range w.gh.Reactions(fakegithub.OnIssueComment, id) {
		reactions = append(reactions, r.Content)
	}
	if strings.Join(reactions, ",") != "eyes,rocket" {
		t.Errorf("reactions on the command = %v, want eyes then rocket", reactions)
	}
	runs := w.gh.CheckRuns()
	if len(runs) != 1 || runs[0].HeadSHA != w.pr.HeadSHA || runs[0].Status != "completed" || !strings.HasPrefix(runs[0].Title, "Complete") {
		t.Errorf("check runs = %+v, want one complete run on the head", runs)
	}
	if calls, _ := w.model.seen(); calls == 0 {
		t.Errorf("the model was never called")
	}
	for _, secret := range []string{fakegithub.DefaultToken, modelKey} {
		if strings.Contains(res.log, secret) {
			t.Errorf("act's log shows a secret (%.8s...)", secret)
		}
	}
	if left := w.leftovers(); len(left) > 0 {
		t.Errorf("processes of the run still alive after act exited (killed now): %v", left)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("act log:\n%s", res.log)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
