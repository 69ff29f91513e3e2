package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadEvent feeds arbitrary event payloads to the Action's event
// handling: it returns a pull request, a deliberate "not reviewed", or an
// input error; it never panics, and a pull request it returns has a head.
func FuzzReadEvent(f *testing.F) {
	f.Add(`{"action":"opened","number":1,"pull_request":{"number":1,"head":{"sha":"abc"},"base":{"sha":"def"}}}`)
	f.Add(`{"action":"closed","pull_request":{"head":{"sha":"abc"}}}`)
	f.Add(`{"pull_request":null}`)
	f.Add(`[]`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, payload string) {
		path := filepath.Join(dir, "event.json")
		if err := os.WriteFile(path, []byte(payload), 0o644); err != nil {
			t.Skip(err)
		}
		env := map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": path}
		pr, err := readEvent(context.Background(), func(k string) string { return env[k] }, &actionInputs{}, nil, "o", "r")
		var skip *errNotReviewed
		var usage *usageError
		switch {
		case err == nil:
			if pr == nil || pr.headSHA == "" {
				t.Fatalf("readEvent(%q) = %+v without a head", payload, pr)
			}
		case errors.As(err, &skip), errors.As(err, &usage):
		default:
			t.Fatalf("readEvent(%q) error %v is neither an input error nor a skip", payload, err)
		}
	})
}
