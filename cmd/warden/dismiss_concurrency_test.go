package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/org/warden/internal/fakegithub"
)

// entryIDRE finds the ids in warden's findings comment's table.
var entryIDRE = regexp.MustCompile("(?m)^\\| `(w[0-9a-f]{7})` \\|")

// TestDismissalsAtOnceAllKept (issue 27, item 6): ten `/warden dismiss
// <id>` comments on findings of warden's findings comment, each run by its
// own job at the same moment (GitHub's issue_comment payload, the owner's
// write access), are all answered "Dismissed"; afterwards every
// one of them holds: a fresh review counts ten suppressed, and the
// findings comment lists ten dismissed.
func TestDismissalsAtOnceAllKept(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.gh.SetRole("alice", fakegithub.RoleAdmin)
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("svc%02d/handler.go", i)] = "package svc\n\n" + numbered(12, "// handler")
	}
	h.commitHead(files)
	h.event("opened", nil)
	h.model.script.Default = manyFindings(10)
	h.env["INPUT_MAX_FINDINGS"] = "0"
	h.env["INPUT_FAIL_ON"] = "off"
	h.config("[filters]\nignore = [\"auth/**\", \"store/**\", \"README.md\"]\n")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	ledger := h.gh.IssueComments(testPR)
	if len(ledger) != 1 {
		t.Fatalf("%d conversation comments, want warden's findings comment", len(ledger))
	}
	var ids []string
	for _, m := range entryIDRE.FindAllStringSubmatch(ledger[0].Body, 10) {
		ids = append(ids, m[1])
	}
	if len(ids) != 10 {
		t.Fatalf("%d ids in the findings comment, want at least 10", len(ids))
	}

	// Each job has its own event file, outputs and summary, as each
	// runner does.
	envs := make([]map[string]string, len(ids))
	for i, id := range ids {
		dir := t.TempDir()
		h.env["GITHUB_EVENT_PATH"] = filepath.Join(dir, "event.json")
		body := "/warden dismiss " + id + " checked by hand"
		cid := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: body, User: "alice", Association: "OWNER"})
		h.commentEvent(cid, body, "alice", "OWNER")
		envs[i] = maps.Clone(h.env)
		envs[i]["GITHUB_OUTPUT"], envs[i]["GITHUB_STEP_SUMMARY"], envs[i]["RUNNER_TEMP"] = filepath.Join(dir, "output"), filepath.Join(dir, "summary.md"), dir
	}
	var wg sync.WaitGroup
	codes := make([]int, len(envs))
	for i, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stdout, stderr bytes.Buffer
			codes[i] = run(context.Background(), nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != exitOK {
			t.Errorf("dismissal %d: exit %d", i, code)
		}
	}
	confirmed := 0
	for _, c := range h.gh.IssueComments(testPR) {
		if strings.HasPrefix(c.Body, "Dismissed `w") {
			confirmed++
		}
	}
	if confirmed != len(ids) {
		t.Errorf("%d dismissals confirmed, want %d", confirmed, len(ids))
	}

	// A fresh review of the whole change: the ten stay dismissed.
	h.env["GITHUB_EVENT_PATH"] = filepath.Join(h.dir, "event.json")
	cid := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden review", User: "alice", Association: "OWNER"})
	h.commentEvent(cid, "/warden review", "alice", "OWNER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if !h.suppressedInReport(len(ids)) {
		t.Errorf("the review's report does not count %d suppressed findings", len(ids))
	}
	if body := h.gh.IssueComments(testPR)[0].Body; !strings.Contains(body, fmt.Sprintf("**Dismissed (%d)**", len(ids))) {
		t.Errorf("the findings comment does not list %d dismissed:\n%.2000s", len(ids), body)
	}
}
