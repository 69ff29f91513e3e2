package ghbot

import (
	"archive/zip"
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/fakegithub"
	ghreport "github.com/org/warden/report/github"
)

const (
	owner = "acme"
	repo  = "widgets"
)

// world is a fake GitHub with a client.
type world struct {
	gh     *fakegithub.Server
	url    string
	client *ghreport.Client
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{gh: fakegithub.New(owner, repo)}
	w.url = w.gh.Start(t).URL
	c, err := ghreport.New(ghreport.Config{APIURL: w.url, Token: fakegithub.DefaultReadOnlyToken, Owner: owner, Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	w.client = c
	return w
}

// key is a results-cache entry name: a 64-hex key under its first two
// characters.
func key(c byte) string {
	k := strings.Repeat(string(c), 64)
	return k[:2] + "/" + k
}

// upload runs r and uploads files (name → content) as artifact name of
// it, as action.yml's upload step does.
func (w *world) upload(t *testing.T, r fakegithub.WorkflowRun, name string, files map[string]string) int64 {
	t.Helper()
	job := w.gh.StartRun(r)
	dir := t.TempDir()
	for n, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	c := &fakegithub.RuntimeClient{ResultsURL: fakegithub.ResultsURL(w.url), Token: job.RuntimeToken}
	id, err := c.UploadArtifact(context.Background(), name, dir, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// files are the files under dir, by slash path.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			b, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return err
	})
	return out
}

// TestRestoreTrustsOnlyWhatNoForkRan: a privileged run restores the
// artifacts of runs that ran this repository's workflow files (a pull
// request from a branch of it, an issue_comment, a pull_request_target),
// across refs, and none of a run that executed a fork's workflow file,
// whatever the artifact is called; each rejection says why.
func TestRestoreTrustsOnlyWhatNoForkRan(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	name := ArtifactName(DomainTrusted, 7)
	w.upload(t, fakegithub.WorkflowRun{Event: "pull_request", Path: ".github/workflows/warden.yml", PullRequests: []int{7}, HeadBranch: "feature"}, name,
		map[string]string{key('a'): "pull_request's answer"})
	forged := w.upload(t, fakegithub.WorkflowRun{Event: "pull_request", Path: ".github/workflows/warden.yml", PullRequests: []int{7}, HeadRepo: "mallory/widgets"}, name,
		map[string]string{key('a'): "forged", key('f'): "forged"})
	w.upload(t, fakegithub.WorkflowRun{Event: "pull_request_target", Path: ".github/workflows/warden.yml", PullRequests: []int{7}}, name,
		map[string]string{key('b'): "pull_request_target's answer"})
	w.upload(t, fakegithub.WorkflowRun{Event: "issue_comment", Path: ".github/workflows/warden-commands.yml"}, name,
		map[string]string{key('c'): "issue_comment's answer", "ab/short": "not an entry"})

	dir := t.TempDir()
	s := &Store{Client: w.client}
	got, err := s.Restore(context.Background(), DomainTrusted, 7, owner+"/"+repo, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{key('a'): "pull_request's answer", key('b'): "pull_request_target's answer", key('c'): "issue_comment's answer"}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("restored files (-want +got):\n%s", diff)
	}
	var events []string
	for _, o := range got.From {
		events = append(events, o.Event)
	}
	if diff := cmp.Diff([]string{"issue_comment", "pull_request_target", "pull_request"}, events); diff != "" {
		t.Errorf("restored from (newest first; -want +got):\n%s", diff)
	}
	if got.Entries != 3 || len(got.Rejected) != 1 || !strings.Contains(got.Rejected[0], "from the fork mallory/widgets") ||
		!strings.Contains(got.Rejected[0], "artifact "+strconv.FormatInt(forged, 10)) {
		t.Errorf("restore = %+v, want 3 entries and the fork's artifact rejected with why", got)
	}
}

// TestRestoreHostileArchive: a zip whose names leave the directory, are
// not the cache's layout, or are too large writes nothing but the cache's
// own entries, and never outside the directory.
func TestRestoreHostileArchive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, size := range map[string]int{"../" + key('e'): 10, "/" + key('e'): 10, key('d'): 10, key('f'): maxEntryBytes + 1, "ab/../../x": 10} {
		f, _ := zw.Create(name)
		f.Write(bytes.Repeat([]byte("x"), size))
	}
	zw.Close()
	job := w.gh.StartRun(fakegithub.WorkflowRun{Event: "issue_comment"})
	c := &fakegithub.RuntimeClient{ResultsURL: fakegithub.ResultsURL(w.url), Token: job.RuntimeToken}
	if _, err := c.UploadArchive(context.Background(), ArtifactName(DomainTrusted, 4), buf.Bytes(), 1, false); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "results")
	got, err := (&Store{Client: w.client}).Restore(context.Background(), DomainTrusted, 4, owner+"/"+repo, dir)
	if err != nil || got.Entries != 1 {
		t.Fatalf("restore = %+v, %v; want one entry", got, err)
	}
	if diff := cmp.Diff(map[string]string{"results/" + key('d'): "xxxxxxxxxx"}, files(t, root)); diff != "" {
		t.Errorf("files written (-want +got):\n%s", diff)
	}
}

// TestRestoreForkDomain: a fork's own run reads only its own fork's
// artifacts of its domain.
func TestRestoreForkDomain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	name := ArtifactName(DomainFork, 7)
	w.upload(t, fakegithub.WorkflowRun{Event: "pull_request", PullRequests: []int{7}, HeadRepo: "mallory/widgets"}, name, map[string]string{key('a'): "mallory's"})
	w.upload(t, fakegithub.WorkflowRun{Event: "pull_request", PullRequests: []int{7}, HeadRepo: "eve/widgets"}, name, map[string]string{key('b'): "eve's"})
	dir := t.TempDir()
	got, err := (&Store{Client: w.client}).Restore(context.Background(), DomainFork, 7, "mallory/widgets", dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{key('a'): "mallory's"}, files(t, dir)); diff != "" {
		t.Errorf("restored files (-want +got):\n%s", diff)
	}
	if len(got.Rejected) != 1 || !strings.Contains(got.Rejected[0], "eve/widgets") {
		t.Errorf("rejected = %q, want eve's", got.Rejected)
	}
}

// TestRestoreBounds: at most MaxRestored artifacts are merged, the newest
// first (an entry already restored from a newer one is kept); nothing at
// all is no error.
func TestRestoreBounds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	name := ArtifactName(DomainTrusted, 9)
	if got, err := (&Store{Client: w.client}).Restore(context.Background(), DomainTrusted, 9, owner+"/"+repo, t.TempDir()); err != nil || len(got.From) != 0 {
		t.Errorf("no artifacts: %+v, %v", got, err)
	}
	for i := range MaxRestored + 2 {
		w.upload(t, fakegithub.WorkflowRun{Event: "issue_comment"}, name, map[string]string{key('a'): "run " + strconv.Itoa(i), key(byte('0' + i)): "x"})
	}
	dir := t.TempDir()
	got, err := (&Store{Client: w.client}).Restore(context.Background(), DomainTrusted, 9, owner+"/"+repo, dir)
	if err != nil {
		t.Fatal(err)
	}
	fs := files(t, dir)
	if len(got.From) != MaxRestored || fs[key('a')] != "run "+strconv.Itoa(MaxRestored+1) || len(fs) != MaxRestored+1 {
		t.Errorf("restored %d artifacts, files %v; want the newest %d, the newest's entry kept", len(got.From), slices.Sorted(maps.Keys(fs)), MaxRestored)
	}
}

// TestParseRecord: a command record is only a comment id; anything else
// is refused with what was wrong.
func TestParseRecord(t *testing.T) {
	t.Parallel()
	zipOf := func(name, content string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		f, _ := zw.Create(name)
		f.Write([]byte(content))
		zw.Close()
		return buf.Bytes()
	}
	for _, tt := range []struct {
		data []byte
		want int64
		err  string
	}{
		{zipOf("command.json", `{"comment_id": 42, "body": "ignored"}`), 42, ""},
		{zipOf("command.json", `{"comment_id": -1}`), 0, "names no comment"},
		{zipOf("command.json", strings.Repeat(" ", maxRecordBytes+1)), 0, "too large"},
		{zipOf("other.json", `{"comment_id": 42}`), 0, "has no command.json"},
		{[]byte("not a zip"), 0, "not a zip"},
	} {
		got, err := parseRecord(tt.data)
		if got.CommentID != tt.want || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("parseRecord(%.40q) = %d, %v; want %d, %q", tt.data, got.CommentID, err, tt.want, tt.err)
		}
	}
}

// TestParseButtonPress reads GitHub's own check_run requested_action
// example, and a fork's check run (no pull_requests) by its external id.
func TestParseButtonPress(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "internal", "fakegithub", "testdata", "webhooks", "check_run", "07-requested_action.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := ParseButtonPress(raw)
	want := ButtonPress{Identifier: "lgtm|26764", CheckName: "API Review", App: "electron-cation", PullRequest: 26764, Sender: "codebytere", SenderType: "User"}
	if err != nil || !ok || !cmp.Equal(want, got) {
		t.Errorf("ParseButtonPress(example) = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	fork := []byte(`{"action":"requested_action","check_run":{"name":"warden","external_id":"warden:pr:7","pull_requests":[],"app":{"slug":"x"}},"requested_action":{"identifier":"warden-resume"},"sender":{"login":"alice","type":"User"}}`)
	if got, ok, err := ParseButtonPress(fork); err != nil || !ok || got.PullRequest != 7 {
		t.Errorf("a fork's check run: %+v, %v, %v; want pull request 7 from the external id", got, ok, err)
	}
	if _, ok, err := ParseButtonPress([]byte(`{"action":"completed"}`)); ok || err != nil {
		t.Errorf("a completed event is a press: %v, %v", ok, err)
	}
	if _, _, err := ParseButtonPress([]byte(`{"action":"requested_action"}`)); err == nil {
		t.Errorf("a press without its check run: no error")
	}
}

// TestHandledOnlyBySealedRecord: a command is taken up once, marked by
// warden's sealed record in a reply of its own; a 👀 from anyone (every
// workflow using GITHUB_TOKEN reacts as warden's login), another account's
// copy of the record, or warden's login writing it unsealed does not make
// warden skip it.
func TestHandledOnlyBySealedRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.client.SetStateKey([]byte("the privileged job's state secret"))
	w.gh.AddPullRequest(fakegithub.PullRequest{Number: 7, HeadSHA: "h1", BaseSHA: "b"})
	id := w.gh.AddReviewComment(7, fakegithub.ReviewComment{User: "mallory", Body: "/warden dismiss"})
	s := &Store{Client: w.client}
	sealed := "warden: taking up the command.\n\n" + w.client.Mark(TakenRecord(id))
	w.gh.AddReaction(fakegithub.OnReviewComment, id, fakegithub.Reaction{Content: "eyes", User: ghreport.DefaultTokenLogin})
	w.gh.AddReviewComment(7, fakegithub.ReviewComment{User: "mallory", Body: sealed, InReplyTo: id})
	w.gh.AddReviewComment(7, fakegithub.ReviewComment{User: ghreport.DefaultTokenLogin, Body: "<!-- warden:" + TakenRecord(id) + " -->", InReplyTo: id})
	if done, err := s.Handled(context.Background(), 7, id); err != nil || done {
		t.Fatalf("Handled with warden's 👀, a copied record and an unsealed one = %v, %v; want false", done, err)
	}
	w.gh.AddReviewComment(7, fakegithub.ReviewComment{User: ghreport.DefaultTokenLogin, Body: sealed, InReplyTo: id})
	if done, err := s.Handled(context.Background(), 7, id); err != nil || !done {
		t.Fatalf("Handled with warden's sealed record = %v, %v; want true", done, err)
	}
	if done, err := s.Handled(context.Background(), 7, id+1000); err != nil || done {
		t.Fatalf("Handled of another comment = %v, %v; want false", done, err)
	}
}
