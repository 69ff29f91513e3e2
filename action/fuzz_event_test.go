package action

import (
	"context"
	"errors"
	"testing"
)

// FuzzParsePullRequest feeds arbitrary event payloads to the Action's event
// handling: it returns a pull request, a deliberate "not reviewed", or an
// input error; it never panics, and a pull request it returns has a head.
func FuzzParsePullRequest(f *testing.F) {
	f.Add(`{"action":"opened","number":1,"pull_request":{"number":1,"head":{"sha":"abc"},"base":{"sha":"def"}}}`)
	f.Add(`{"action":"closed","pull_request":{"head":{"sha":"abc"}}}`)
	f.Add(`{"pull_request":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, payload string) {
		ev := Event{Name: "pull_request", Path: "event.json", Data: []byte(payload)}
		pr, err := ParsePullRequest(context.Background(), ev, 0, nil, "o", "r")
		var skip *NotReviewedError
		var usage *InputError
		switch {
		case err == nil:
			if pr == nil || pr.HeadSHA == "" {
				t.Fatalf("ParsePullRequest(%q) = %+v without a head", payload, pr)
			}
		case errors.As(err, &skip), errors.As(err, &usage):
		default:
			t.Fatalf("ParsePullRequest(%q) error %v is neither an input error nor a skip", payload, err)
		}
	})
}
