package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/org/warden/internal/fakegithub"
)

// The commands workflow's concurrency under GitHub's pending-job rule
// (issue 27, item 6): at most one running and one pending run in a group,
// a newly queued run cancelling the pending one. The fake GitHub applies
// the rule to the group each run's event evaluates to.

// readmeCommandsConcurrency is the concurrency: block of the README's
// commands workflow.
func readmeCommandsConcurrency(t *testing.T) (group string, cancelInProgress bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const label = "`.github/workflows/warden-commands.yml`, next to the workflow above:"
	_, rest, ok := strings.Cut(string(data), label)
	if !ok {
		t.Fatalf("README.md has no %q", label)
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatalf("README.md has no yaml block after %q", label)
	}
	var wf struct {
		Concurrency struct {
			Group            string `yaml:"group"`
			CancelInProgress bool   `yaml:"cancel-in-progress"`
		} `yaml:"concurrency"`
	}
	if err := yaml.Unmarshal([]byte(block), &wf); err != nil || wf.Concurrency.Group == "" {
		t.Fatalf("the README's commands workflow: no concurrency group (%v):\n%s", err, block)
	}
	return wf.Concurrency.Group, wf.Concurrency.CancelInProgress
}

// oldCommandsGroup is the group the README's commands workflow had
// before issue 27: one per pull request.
const oldCommandsGroup = "warden-commands-${{ github.event.issue.number || github.event.pull_request.number || github.event.check_run.external_id }}"

var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// evalGroup evaluates a concurrency group as GitHub does, for the
// expressions the README's groups use: ${{ a || b || ... }} of
// github.event.<path> and github.run_id, the first one that is set.
func evalGroup(t *testing.T, expr string, event map[string]any, runID int64) string {
	t.Helper()
	return exprRE.ReplaceAllStringFunc(expr, func(m string) string {
		for _, term := range strings.Split(exprRE.FindStringSubmatch(m)[1], "||") {
			term = strings.TrimSpace(term)
			var v any
			switch {
			case term == "github.run_id":
				v = strconv.FormatInt(runID, 10)
			case strings.HasPrefix(term, "github.event."):
				v = event
				for _, k := range strings.Split(strings.TrimPrefix(term, "github.event."), ".") {
					obj, _ := v.(map[string]any)
					v = obj[k]
				}
			default:
				t.Fatalf("concurrency group %q: %q is not an expression this test evaluates", expr, term)
			}
			switch v := v.(type) {
			case string:
				if v != "" {
					return v
				}
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
		return ""
	})
}

// command is a /warden comment: its author and text.
type command struct{ login, body string }

// commandBurst posts cmds as comments in quick succession: each
// comment's issue_comment event queues a run of the commands workflow
// under conc (its group evaluated for the event) before any job ends, as
// a burst arrives at GitHub. Then the runner takes each job GitHub starts,
// in order, until none is left. It returns the comments' ids and runs.
func (h *actionHarness) commandBurst(group string, cancelInProgress bool, cmds []command) ([]int64, []fakegithub.WorkflowRun) {
	h.t.Helper()
	events := map[int64][]byte{}
	var ids []int64
	var runs []int64
	for i, c := range cmds {
		id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: c.body, User: c.login})
		h.commentEvent(id, c.body, c.login, h.gh.Association(c.login))
		raw, err := os.ReadFile(h.env["GITHUB_EVENT_PATH"])
		if err != nil {
			h.t.Fatal(err)
		}
		var ev map[string]any
		if err := json.Unmarshal(raw, &ev); err != nil {
			h.t.Fatal(err)
		}
		r := commentRun
		r.ID = int64(900001 + i)
		r.HeadSHA = h.pr.HeadSHA
		r.Actor = c.login
		r.Concurrency = fakegithub.Concurrency{Group: evalGroup(h.t, group, ev, r.ID), CancelInProgress: cancelInProgress}
		h.gh.QueueRun(r)
		events[r.ID] = raw
		ids, runs = append(ids, id), append(runs, r.ID)
	}
	for job, ok := h.gh.NextJob(); ok; job, ok = h.gh.NextJob() {
		if err := os.WriteFile(h.env["GITHUB_EVENT_PATH"], events[job.Run.ID], 0o644); err != nil {
			h.t.Fatal(err)
		}
		if res := h.runJob(context.Background(), job); res.code > exitFindings {
			h.t.Fatalf("the job of run %d: exit %d; stderr:\n%s", job.Run.ID, res.code, res.stderr)
		}
	}
	var out []fakegithub.WorkflowRun
	for _, r := range h.gh.Runs() {
		if slices.Contains(runs, r.ID) {
			out = append(out, r)
		}
	}
	return ids, out
}

// TestCommandBurst: five commands from a maintainer in quick succession
// (review, help, review, accept, review). Under the README's commands
// workflow every command's job runs and every command is answered: 👀 and
// 🚀 on each, the two earlier reviews with a one-line reply naming the
// review that supersedes them (the last, which runs: one check run), help
// and accept with their replies. Under a group per pull request (the
// README's settings before), GitHub's pending-job rule runs only the first
// and the last: the three between are cancelled and get no reaction and
// no reply.
func TestCommandBurst(t *testing.T) {
	t.Parallel()
	readmeGroup, readmeCancel := readmeCommandsConcurrency(t)
	bodies := []string{"/warden review", "/warden help", "/warden review", "/warden accept", "/warden review"}
	for _, tt := range []struct {
		name   string
		group  string
		cancel bool
		// reactions are warden's reactions on each command; cancelled
		// the commands whose runs GitHub cancelled.
		reactions [][]string
		cancelled []int
		// replies are the replies warden posted, in order, by the start
		// of each.
		replies []string
	}{
		{"the README's workflow: a group per comment", readmeGroup, readmeCancel,
			[][]string{{"eyes", "rocket"}, {"eyes", "rocket"}, {"eyes", "rocket"}, {"eyes", "confused"}, {"eyes", "rocket"}}, nil,
			[]string{"warden: superseded by the review of", "", "warden: superseded by the review of", "warden: there is no `warden` check run"}},
		{"a group per pull request: the pending-job rule", oldCommandsGroup, false,
			[][]string{{"eyes", "rocket"}, nil, nil, nil, {"eyes", "rocket"}}, []int{1, 2, 3},
			[]string{"warden: superseded by the review of"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			h.gh.AddOrgMember("maria")
			h.gh.SetRole("maria", fakegithub.RoleWrite)
			var cmds []command
			for _, b := range bodies {
				cmds = append(cmds, command{"maria", b})
			}
			ids, runs := h.commandBurst(tt.group, tt.cancel, cmds)

			for i, r := range runs {
				if cancelled := r.Conclusion == "cancelled"; r.Status != "completed" || cancelled != slices.Contains(tt.cancelled, i) {
					t.Errorf("the run of command %d (%s): %s/%s, want it completed, cancelled %v", i+1, bodies[i], r.Status, r.Conclusion, slices.Contains(tt.cancelled, i))
				}
			}
			for i, id := range ids {
				if got, want := h.reactions(id), tt.reactions[i]; !slices.Equal(got, want) {
					t.Errorf("command %d (%s): reactions %q, want %q", i+1, bodies[i], got, want)
				}
			}
			var replies []string
			for _, c := range h.gh.IssueComments(testPR) {
				if c.User == "github-actions[bot]" && !strings.Contains(c.Body, "warden:ledger") {
					replies = append(replies, c.Body)
				}
			}
			if len(replies) != len(tt.replies) {
				t.Fatalf("%d replies, want %d: %q", len(replies), len(tt.replies), replies)
			}
			last := fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", testOwner, testRepo, testPR, ids[len(ids)-1])
			for i, want := range tt.replies {
				switch {
				case want == "": // help
					if !strings.Contains(replies[i], "/warden review") {
						t.Errorf("reply %d = %q, want the help", i+1, replies[i])
					}
				case !strings.HasPrefix(replies[i], want):
					t.Errorf("reply %d = %q, want it to start %q", i+1, replies[i], want)
				case strings.Contains(want, "superseded") && (!strings.Contains(replies[i], h.pr.HeadSHA[:7]) || !strings.Contains(replies[i], last)):
					t.Errorf("reply %d = %q, want it to name head %s and link the last command (%s)", i+1, replies[i], h.pr.HeadSHA[:7], last)
				}
			}
			if checks := h.gh.CheckRuns(); len(checks) != 1 || checks[0].HeadSHA != h.pr.HeadSHA || h.model.calls() == 0 {
				t.Errorf("%d check runs and %d model calls; want one review of the head, by the last command", len(checks), h.model.calls())
			}
		})
	}
}

// TestCommandNotSupersededByOthers: a later `/warden review` supersedes an
// earlier one only when its author may run it. A read-only collaborator's
// (trusted by association, without write access) and a stranger's do not
// keep a maintainer's review from running.
func TestCommandNotSupersededByOthers(t *testing.T) {
	t.Parallel()
	readmeGroup, readmeCancel := readmeCommandsConcurrency(t)
	for _, tt := range []struct{ name, login, role string }{
		{"a read-only collaborator", "rita", fakegithub.RoleRead},
		{"a stranger", "mallory", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			h.gh.SetRole("maria", fakegithub.RoleMaintain)
			if tt.role != "" {
				h.gh.SetRole(tt.login, tt.role)
			}
			ids, _ := h.commandBurst(readmeGroup, readmeCancel, []command{{"maria", "/warden review"}, {tt.login, "/warden review"}})
			for _, c := range h.gh.IssueComments(testPR) {
				if strings.Contains(c.Body, "superseded") {
					t.Errorf("maria's review was answered %q after %s's later /warden review", c.Body, tt.name)
				}
			}
			if got := h.reactions(ids[0]); !slices.Equal(got, []string{"eyes", "rocket"}) {
				t.Errorf("maria's review: reactions %q, want it run (eyes, rocket)", got)
			}
		})
	}
}
