package ghbot

import (
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	ghreport "github.com/org/warden/report/github"
)

func TestParseState(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("ab", 20)
	for _, tt := range []struct {
		records []string
		want    ReviewState
		ok      bool
	}{
		{[]string{StateRecord(ReviewState{Head: head, Complete: true})}, ReviewState{head, true}, true},
		{[]string{StateRecord(ReviewState{Head: head}), ghreport.AcceptableRecord, StateRecord(ReviewState{Head: head, Complete: true})}, ReviewState{head, true}, true},
		{[]string{"state:v1 head=abc complete=true"}, ReviewState{}, false},
		{nil, ReviewState{}, false},
	} {
		got, ok := ParseState(tt.records)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseState(%q) = %+v, %v; want %+v, %v", tt.records, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLastReviewState: the state a run records in its completed check run
// is what the next push's run reads from the check run on "before"; an
// unfinished run or another commit's says nothing.
func TestLastReviewState(t *testing.T) {
	t.Parallel()
	testHead := strings.Repeat("1", 40)
	fake := fakegithub.New(owner, repo)
	url := fake.Start(t).URL
	client := func(token string) *ghreport.Client {
		c, err := ghreport.New(ghreport.Config{APIURL: url, Token: token, Owner: owner, Repo: repo})
		if err != nil {
			t.Fatal(err)
		}
		c.SetStateKey([]byte("the privileged job's state secret"))
		return c
	}
	c := client(fakegithub.DefaultToken)
	ctx := t.Context()
	if _, ok, err := LastReviewState(ctx, c, "warden", testHead, ""); err != nil || ok {
		t.Fatalf("LastReviewState before any run = %v, %v", ok, err)
	}
	id, err := c.CreateCheckRun(ctx, "warden", testHead)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := LastReviewState(ctx, c, "warden", testHead, ""); ok {
		t.Errorf("an in-progress run gave a state")
	}
	want := ReviewState{Head: testHead, Complete: true}
	if err := c.CompleteCheckRun(ctx, id, ghreport.CheckOutput{Conclusion: "success", Title: "Complete", Summary: "**warden**: complete", Records: []string{StateRecord(want)}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := LastReviewState(ctx, c, "warden", testHead, "")
	if err != nil || !ok || got != want {
		t.Errorf("LastReviewState = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if _, ok, _ := LastReviewState(ctx, c, "other-check", testHead, ""); ok {
		t.Errorf("another check's name gave a state")
	}
	if _, ok, _ := LastReviewState(ctx, c, "warden", strings.Repeat("2", 40), ""); ok {
		t.Errorf("another commit gave a state")
	}
	// A check run of an app of the repository's own counts when warden's
	// token is that app's, and not otherwise.
	other := strings.Repeat("3", 40)
	app := client(fakegithub.AppToken)
	id, _ = app.CreateCheckRun(ctx, "warden", other)
	app.CompleteCheckRun(ctx, id, ghreport.CheckOutput{Conclusion: "success", Title: "Complete", Records: []string{StateRecord(ReviewState{Head: other, Complete: true})}})
	if _, ok, _ := LastReviewState(ctx, c, "warden", other, ""); ok {
		t.Errorf("another app's check run gave a state to GitHub Actions' token")
	}
	if _, ok, _ := LastReviewState(ctx, app, "warden", other, fakegithub.AppSlug); !ok {
		t.Errorf("the app's own check run gave no state to the app")
	}
	// The record's text without its seal (another workflow's check run
	// summary, or a seal under another key) gives no state.
	forged := strings.Repeat("4", 40)
	id, _ = c.CreateCheckRun(ctx, "warden", forged)
	c.CompleteCheckRun(ctx, id, ghreport.CheckOutput{Conclusion: "success", Title: "Complete",
		Summary: "<!-- warden:" + StateRecord(ReviewState{Head: forged, Complete: true}) + " -->"})
	if _, ok, _ := LastReviewState(ctx, c, "warden", forged, ""); ok {
		t.Errorf("an unsealed state record gave a state")
	}
}
