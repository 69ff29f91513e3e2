package scenario_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/scenario"
)

// TestPlayer: a call the schedule fails gets the error and delivers
// nothing; one it lets through gets the answer in its context, after the
// schedule's delay, and is delivered under the answer's key; one with no
// answer (the engine's probe) gets "OK" and delivers nothing.
func TestPlayer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := scenario.Route{Name: "r", Faults: []scenario.Fault{{LastCall: 1, Status: 503}, {FirstCall: 1, Delay: scenario.Span(3 * time.Second)}}}
		p := r.Player(0)
		client := &http.Client{Transport: p.Transport()}
		call := func(ctx context.Context) (int, string) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://player.invalid/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		ans := scenario.WithAnswer(context.Background(), scenario.Answer{Key: "k1", Content: "recorded", Model: "m", PromptTokens: 5, CompletionTokens: 2})
		if code, _ := call(ans); code != 503 || p.Delivered("k1") {
			t.Errorf("call 0: status %d, delivered %v; want 503 and nothing", code, p.Delivered("k1"))
		}
		start := time.Now()
		if code, body := call(ans); code != 200 || !strings.Contains(body, `"content":"recorded"`) || !p.Delivered("k1") || time.Since(start) != 3*time.Second {
			t.Errorf("call 1: status %d after %v, body %s, delivered %v", code, time.Since(start), body, p.Delivered("k1"))
		}
		if code, body := call(context.Background()); code != 200 || !strings.Contains(body, `"content":"OK"`) {
			t.Errorf("probe: status %d, body %s", code, body)
		}
		if p.Calls() != 3 {
			t.Errorf("Calls() = %d, want 3", p.Calls())
		}
	})
}

// TestPlayerSettle: a caller that stops reading at the end of the JSON
// answer may move on before the player records the answer as delivered
// (without Settle this test failed 3 times in 900 under -race -cpu 1,2,4,
// and the fault eval's "no faults" row now and then said an answered item
// got no answer); after Settle it is recorded, at once (not after
// Settle's bound). A call that hangs holds Settle only for its bound.
func TestPlayerSettle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := scenario.Route{Name: "r", Faults: []scenario.Fault{{LastCall: 1, Delay: scenario.Span(3 * time.Second)}, {FirstCall: 1, Hang: true}}}
		p := r.Player(0)
		client := &http.Client{Transport: p.Transport()}
		post := func(ctx context.Context) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://player.invalid/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
			return client.Do(req)
		}
		start := time.Now()
		resp, err := post(scenario.WithAnswer(context.Background(), scenario.Answer{Key: "k1", Content: "recorded", Model: "m"}))
		if err != nil {
			t.Fatal(err)
		}
		var answer struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || len(answer.Choices) != 1 || answer.Choices[0].Message.Content != "recorded" {
			t.Fatalf("answer %+v, %v; want the recorded one", answer, err)
		}
		p.Settle(time.Minute)
		if !p.Delivered("k1") || time.Since(start) != 3*time.Second {
			t.Errorf("after Settle at %v: delivered %v; want delivered, at 3s", time.Since(start), p.Delivered("k1"))
		}
		resp.Body.Close()

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { // the hanging call: no headers until its context ends
			defer close(done)
			if resp, err := post(ctx); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		start = time.Now()
		p.Settle(time.Second)
		if el := time.Since(start); el != time.Second {
			t.Errorf("Settle with a hanging call returned after %v, want its 1s bound", el)
		}
		cancel()
		<-done
	})
}

// TestLoadAll: a directory's *.toml in name order; a missing path or an
// empty directory is an error naming it.
func TestLoadAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"b", "a"} {
		if err := os.WriteFile(filepath.Join(dir, n+".toml"), []byte("[[routes]]\nname = \"r\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := scenario.LoadAll([]string{dir})
	if err != nil || len(files) != 2 || files[0].Name != "a" || files[1].Name != "b" {
		t.Errorf("LoadAll(dir) = %d files, %v", len(files), err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.toml"), t.TempDir()} {
		if _, err := scenario.LoadAll([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("LoadAll(%s) = %v, want an error naming it", bad, err)
		}
	}
}
