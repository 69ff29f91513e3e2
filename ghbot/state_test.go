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
		text string
		want ReviewState
		ok   bool
	}{
		{"Complete\n" + StateMarker(ReviewState{Head: head, Complete: true}), ReviewState{head, true}, true},
		{StateMarker(ReviewState{Head: head}) + "\n" + StateMarker(ReviewState{Head: head, Complete: true}), ReviewState{head, true}, true},
		{"<!-- warden:state:v1 head=abc complete=true -->", ReviewState{}, false},
		{"&lt;!-- warden:state:v1 head=" + head + " complete=true --&gt;", ReviewState{}, false},
		{"", ReviewState{}, false},
	} {
		got, ok := ParseState(tt.text)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseState(%q) = %+v, %v; want %+v, %v", tt.text, got, ok, tt.want, tt.ok)
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
	if err := c.CompleteCheckRun(ctx, id, ghreport.CheckOutput{Conclusion: "success", Title: "Complete", Summary: "**warden**: complete\n\n" + StateMarker(want)}); err != nil {
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
	app.CompleteCheckRun(ctx, id, ghreport.CheckOutput{Conclusion: "success", Title: "Complete", Summary: StateMarker(ReviewState{Head: other, Complete: true})})
	if _, ok, _ := LastReviewState(ctx, c, "warden", other, ""); ok {
		t.Errorf("another app's check run gave a state to GitHub Actions' token")
	}
	if _, ok, _ := LastReviewState(ctx, app, "warden", other, fakegithub.AppSlug); !ok {
		t.Errorf("the app's own check run gave no state to the app")
	}
}
