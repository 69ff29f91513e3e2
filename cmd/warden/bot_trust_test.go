package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	ghreport "github.com/org/warden/report/github"
)

// push commits a change to the README (no finding's lines move) and runs
// the Action on the synchronize event; it returns the run's output and the
// check run's summary.
func (h *actionHarness) push(n int) (res result, summary string) {
	h.t.Helper()
	h.commitHead(map[string]string{"README.md": "# widgets\n\nNow with sessions, take " + itoa(n) + ".\n"})
	if res = h.run(context.Background()); res.code > exitFindings {
		h.t.Fatalf("push %d: exit %d; stderr:\n%s", n, res.code, res.stderr)
	}
	return res, h.lastCheckRun().Summary
}

// suppressedInReport is the report file's suppressed count, as JSON text.
func (h *actionHarness) suppressedInReport(n int) bool {
	report, _ := os.ReadFile(h.outputs()["report-file"])
	if n == 0 {
		return !bytes.Contains(report, []byte(`"suppressed": `)) || bytes.Contains(report, []byte(`"suppressed": 0`))
	}
	return bytes.Contains(report, []byte(fmt.Sprintf(`"suppressed": %d`, n)))
}

// permissionLookups are the logins whose permission the fake was asked
// for, in order.
func (h *actionHarness) permissionLookups() []string {
	var out []string
	for _, r := range h.gh.RequestsTo(fakegithub.RouteGetPermission) {
		parts := strings.Split(r.Path, "/")
		out = append(out, parts[len(parts)-2])
	}
	return out
}

// TestBotDismissalNeedsWriteAccess: on a public repository anyone may
// react to warden's comments and the author may resolve threads. A
// stranger's thumbs-down (permission read), a none-permission account's,
// the untrusted author's (even with write access: the author rule stays)
// and a stranger resolving a thread do not suppress the findings on the
// next push; a maintainer's thumbs-down (write) and a maintainer resolving
// a thread do. Each login is looked up once a run.
func TestBotDismissalNeedsWriteAccess(t *testing.T) {
	t.Parallel()
	h, roots := reviewedTwice(t)
	down, resolved := roots[0], roots[1]
	h.gh.SetRole("mallory", fakegithub.RoleRead)
	h.gh.SetRole("sock", fakegithub.RoleNone)
	h.gh.SetRole("alice", fakegithub.RoleWrite) // the pull request's author, association NONE
	h.gh.SetRole("maria", fakegithub.RoleMaintain)
	h.gh.SetRole("wendy", fakegithub.RoleWrite)
	for _, who := range []string{"mallory", "sock", "alice", "dependabot[bot]"} {
		h.gh.AddReaction(fakegithub.OnReviewComment, down.ID, fakegithub.Reaction{Content: "-1", User: who})
	}
	h.gh.AddReaction(fakegithub.OnReviewComment, resolved.ID, fakegithub.Reaction{Content: "-1", User: "mallory"})
	h.gh.ResolveThread(resolved.ID, "mallory")

	res, summary := h.push(2)
	if strings.Contains(summary, "**Suppressed:**") || !h.suppressedInReport(0) {
		t.Errorf("strangers' thumbs-downs and resolution suppressed a finding:\n%.800s", summary)
	}
	if got := strings.Join(h.permissionLookups(), ","); got != "mallory,sock" {
		t.Errorf("permission lookups %q, want mallory,sock: once each, never the untrusted author or a bot", got)
	}
	if strings.Contains(res.stdout+res.stderr, "::warning::warden: read the repository permission") {
		t.Errorf("a clean lookup warned:\n%s", res.stdout)
	}

	// The maintainers' word counts.
	h.gh.AddReaction(fakegithub.OnReviewComment, down.ID, fakegithub.Reaction{Content: "-1", User: "maria"})
	h.gh.ResolveThread(resolved.ID, "wendy")
	_, summary = h.push(3)
	if !strings.Contains(summary, "**Suppressed:** 2 findings dismissed") || !h.suppressedInReport(2) {
		t.Errorf("the maintainers' thumbs-down and resolution did not suppress the findings:\n%.800s", summary)
	}
	if got := strings.Join(h.permissionLookups()[2:], ","); got != "mallory,sock,maria,wendy" {
		t.Errorf("second run's permission lookups %q, want mallory,sock,maria,wendy", got)
	}
}

// reviewedTwice is a harness whose first review posted two findings or
// more, and their root comments.
func reviewedTwice(t *testing.T) (*actionHarness, []fakegithub.ReviewComment) {
	t.Helper()
	h := newActionHarness(t, "high")
	if res := h.run(context.Background()); res.code != exitFindings {
		t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	roots := rootComments(h)
	if len(roots) < 2 {
		t.Fatalf("%d findings posted, want 2 or more", len(roots))
	}
	return h, roots
}

// rootComments are warden's first comments of its threads whose finding
// no other thread shares (two findings on the same code share a
// fingerprint), so that each dismissal suppresses one finding, and whose
// code the pushes of these tests leave as it is (they rewrite README.md:
// a finding on code that changed is another finding).
func rootComments(h *actionHarness) []fakegithub.ReviewComment {
	var roots []fakegithub.ReviewComment
	seen := map[string]int{}
	for _, c := range h.gh.ReviewComments(testPR) {
		if c.InReplyTo == 0 && strings.Contains(c.Body, "warden:fp:") && c.Path != "README.md" {
			roots = append(roots, c)
			seen[fingerprintIn(c.Body)]++
		}
	}
	var out []fakegithub.ReviewComment
	for _, c := range roots {
		if seen[fingerprintIn(c.Body)] == 1 {
			out = append(out, c)
		}
	}
	return out
}

// TestBotPermissionLookupFailsClosed: when GitHub cannot say a login's
// permission (a server error, a 403 for a token that may not read it, a
// 404), the thumbs-down does not count, with one warning line, and the run
// goes on.
func TestBotPermissionLookupFailsClosed(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]fakegithub.Fault{
		"502": {Status: http.StatusBadGateway},
		"503": {Status: http.StatusServiceUnavailable},
		"403": {Status: http.StatusForbidden, Message: "Must have push access to view collaborator permission."},
		"404": {Status: http.StatusNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			if res := h.run(context.Background()); res.code != exitFindings {
				t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
			}
			root := rootComments(h)[0]
			h.gh.SetRole("maria", fakegithub.RoleAdmin)
			h.gh.AddReaction(fakegithub.OnReviewComment, root.ID, fakegithub.Reaction{Content: "-1", User: "maria"})
			h.gh.Fail(fakegithub.RouteGetPermission, fault)
			res, summary := h.push(2)
			if strings.Contains(summary, "**Suppressed:**") || !h.suppressedInReport(0) {
				t.Errorf("a failed permission lookup trusted the login:\n%.800s", summary)
			}
			out := res.stdout + res.stderr
			if n := strings.Count(out, "::warning::warden: read the repository permission of maria"); n != 1 {
				t.Errorf("%d warning lines about the failed lookup, want 1:\n%s", n, out)
			}
			if n := len(h.permissionLookups()); n != 1 {
				t.Errorf("%d lookups, want 1 (a failed lookup is not retried)", n)
			}
			if strings.Contains(strings.ReplaceAll(out, "::add-mask::"+fakegithub.DefaultToken, ""), fakegithub.DefaultToken) {
				t.Errorf("the token leaked into the output")
			}
			// The next run, with GitHub answering again, counts it.
			_, summary = h.push(3)
			if !strings.Contains(summary, "**Suppressed:** 1 finding dismissed") {
				t.Errorf("the admin's thumbs-down did not count once GitHub answered:\n%.800s", summary)
			}
		})
	}
}

// TestBotPermissionLookupsBounded: thumbs-downs from more logins than
// ghreport.MaxPermissionLookups, on several threads, cost at most that many
// lookups a run (each login once); the logins beyond the bound are not
// trusted, even a maintainer's, and the summary and one warning line say
// so.
func TestBotPermissionLookupsBounded(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	if res := h.run(context.Background()); res.code != exitFindings {
		t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	roots := rootComments(h)
	strangers := ghreport.MaxPermissionLookups + 10
	for _, root := range roots {
		for i := range strangers {
			h.gh.AddReaction(fakegithub.OnReviewComment, root.ID, fakegithub.Reaction{Content: "-1", User: fmt.Sprintf("sock%d", i)})
		}
	}
	h.gh.SetRole("maria", fakegithub.RoleWrite)
	h.gh.AddReaction(fakegithub.OnReviewComment, roots[0].ID, fakegithub.Reaction{Content: "-1", User: "maria"})

	res, summary := h.push(2)
	if n := len(h.permissionLookups()); n != ghreport.MaxPermissionLookups {
		t.Errorf("%d permission lookups for %d logins on %d threads, want %d", n, strangers+1, len(roots), ghreport.MaxPermissionLookups)
	}
	if strings.Contains(summary, "**Suppressed:**") {
		t.Errorf("a login beyond the bound was trusted:\n%.800s", summary)
	}
	if want := fmt.Sprintf("**Not counted:** the thumbs-down or resolution of %d logins whose repository permission was not checked", strangers+1-ghreport.MaxPermissionLookups); !strings.Contains(summary, want) {
		t.Errorf("the summary does not say what was not checked (%q):\n%.1200s", want, summary)
	}
	if n := strings.Count(res.stdout+res.stderr, fmt.Sprintf("::warning::warden: more than %d logins", ghreport.MaxPermissionLookups)); n != 1 {
		t.Errorf("%d warning lines about the bound, want 1:\n%s", n, res.stdout)
	}
}

// TestBotReactionsReadWithThreads: the thumbs-downs on warden's comments
// come with the review threads (GraphQL), so a run costs no request a
// thread for them; only a comment with more than the query reads (100) is
// listed whole over REST, and a trusted thumbs-down past the first hundred
// still dismisses its finding.
func TestBotReactionsReadWithThreads(t *testing.T) {
	t.Parallel()
	h, roots := reviewedTwice(t)
	for _, who := range []string{"mallory", "sock", "eve"} {
		h.gh.AddReaction(fakegithub.OnReviewComment, roots[0].ID, fakegithub.Reaction{Content: "-1", User: who})
	}
	for i := range 120 { // bots' reactions: no login, never trusted
		h.gh.AddReaction(fakegithub.OnReviewComment, roots[1].ID, fakegithub.Reaction{Content: "-1", User: fmt.Sprintf("helper%d[bot]", i)})
	}
	h.gh.SetRole("maria", fakegithub.RoleWrite)
	h.gh.AddReaction(fakegithub.OnReviewComment, roots[1].ID, fakegithub.Reaction{Content: "-1", User: "maria"})

	_, summary := h.push(2)
	var listed []string
	for _, r := range h.gh.RequestsTo(fakegithub.RouteListReviewCommentReactions) {
		listed = append(listed, r.Path)
	}
	want := fmt.Sprintf("/repos/%s/%s/pulls/comments/%d/reactions", h.gh.Owner, h.gh.Repo, roots[1].ID)
	if len(listed) != 2 || listed[0] != want || listed[1] != want {
		t.Errorf("REST reaction listings %q, want two pages of %s only (the comment with 121 thumbs-downs)", listed, want)
	}
	if !strings.Contains(summary, "**Suppressed:** 1 finding") || !h.suppressedInReport(1) {
		t.Errorf("maria's thumbs-down, the 121st, did not dismiss the finding:\n%.800s", summary)
	}
}
