package eval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// RecordingFormat names the format of a recording's entries and of their
// keys; a recording of another format is not read.
const RecordingFormat = "warden.eval.recording/v1"

// Key is the key of a model's answer to req: the results cache's key
// (review.CacheKey) in the recording's own domain, so any change of the
// prompt, the skill's text, the chunk, its context, the schema, max_tokens
// or temperature is another key.
func Key(req *execution.Request) string { return keyFor(req.Model, req) }

// keyFor is req's key as if it were sent to model.
func keyFor(model string, req *execution.Request) string {
	return review.CacheKey(RecordingFormat, model, req)
}

// Entry is one recorded answer.
type Entry struct {
	Format       string          `json:"format"`
	Key          string          `json:"key"`
	Model        string          `json:"model"`         // the model asked
	AnswerModel  string          `json:"answer_model"`  // the model the server said answered
	Content      string          `json:"content"`       // the answer
	FinishReason string          `json:"finish_reason"` // as the server gave it
	Usage        execution.Usage `json:"usage"`         // as the server reported it
	DurationMS   int64           `json:"duration_ms"`   // the call's wall time when recorded
	Producer     string          `json:"producer"`      // who answered: the route's name and model, or a test's scripted model
}

// Tape is the provider wrapper of one eval run: it passes calls to the
// route's provider (live, and recording when Dir is set), or answers them
// from Dir with no model at all (replay). It adds up the model time of the
// answers it gave, so that a live and a replayed run report the same
// measure. A Tape is safe for concurrent use.
type Tape struct {
	mode     Mode
	dir      string
	producer string

	mu      sync.Mutex
	modelMS int64
	misses  int
	models  map[string]bool
	err     error // the first write error
}

// Mode is how an eval run gets its answers.
type Mode string

// The modes.
const (
	ModeLive     Mode = "live"     // from the model
	ModeRecorded Mode = "recorded" // from the model, saved to a directory
	ModeReplayed Mode = "replayed" // from a directory, no model called
)

// NewTape returns the tape of a run in mode; dir is the recording's
// directory (unused when live). producer, when set, names who answers (a
// test's scripted model); "" names each route and its model. A replay
// reads it from the entries.
func NewTape(mode Mode, dir, producer string) *Tape {
	return &Tape{mode: mode, dir: dir, producer: producer, models: map[string]bool{}}
}

// ErrReplayMiss is the cause of a replayed call whose answer is not in the
// recording: the prompt, the skill, the case or the model differ from when
// it was recorded.
var ErrReplayMiss = errors.New("no recorded answer for this request (the prompt, skill, case or model changed since the recording: record again)")

type missError struct{ key string }

func (e *missError) Error() string          { return "replay " + e.key[:12] + ": " + ErrReplayMiss.Error() }
func (e *missError) Unwrap() error          { return ErrReplayMiss }
func (e *missError) Class() execution.Class { return execution.ClassBadRequest }

// Wrap returns the provider that route rt uses under the tape. Its answers
// are recorded as produced by the tape's producer, else by the route
// ("route NAME, model MODEL").
func (t *Tape) Wrap(rt execution.Route) execution.Provider {
	return tapeProvider{t, rt.Provider, cmp.Or(t.producer, fmt.Sprintf("route %s, model %s", rt.Name, rt.Model))}
}

type tapeProvider struct {
	t        *Tape
	next     execution.Provider
	producer string
}

func (tp tapeProvider) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	t := tp.t
	key := Key(req)
	if t.mode == ModeReplayed {
		e, err := t.read(key)
		if err != nil {
			t.mu.Lock()
			t.misses++
			t.mu.Unlock()
			return nil, err
		}
		t.add(e.DurationMS, e.Producer)
		return &execution.Response{Content: e.Content, Model: e.AnswerModel, FinishReason: e.FinishReason, Usage: e.Usage}, nil
	}
	start := time.Now()
	resp, err := tp.next.Complete(ctx, req)
	ms := time.Since(start).Milliseconds()
	if err != nil {
		return nil, err
	}
	t.add(ms, tp.producer)
	if t.mode == ModeRecorded {
		t.write(Entry{Format: RecordingFormat, Key: key, Model: req.Model, AnswerModel: resp.Model, Content: resp.Content,
			FinishReason: resp.FinishReason, Usage: resp.Usage, DurationMS: ms, Producer: tp.producer})
	}
	return resp, nil
}

func (t *Tape) add(ms int64, producer string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.modelMS += ms
	if producer != "" {
		t.models[producer] = true
	}
}

func (t *Tape) path(key string) string { return filepath.Join(t.dir, key[:2], key+".json") }

// read is a recorded entry; a missing, unreadable or foreign entry is a
// miss, never an answer.
func (t *Tape) read(key string) (*Entry, error) {
	b, err := os.ReadFile(t.path(key))
	if err != nil {
		return nil, &missError{key}
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil || e.Format != RecordingFormat || e.Key != key {
		return nil, &missError{key}
	}
	return &e, nil
}

// write saves an entry. A recording keeps the last answer to a request: a
// request asked twice (a retry after a bad answer) records what was used.
func (t *Tape) write(e Entry) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err == nil {
		p := t.path(e.Key)
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			tmp := p + ".tmp"
			if err = os.WriteFile(tmp, append(b, '\n'), 0o644); err == nil {
				err = os.Rename(tmp, p)
			}
		}
	}
	if err != nil {
		t.mu.Lock()
		if t.err == nil {
			t.err = fmt.Errorf("record: %w", err)
		}
		t.mu.Unlock()
	}
}

// take returns and resets the model time and misses since the last take.
func (t *Tape) take() (modelMS int64, misses int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	modelMS, misses = t.modelMS, t.misses
	t.modelMS, t.misses = 0, 0
	return modelMS, misses
}

// Producers are who answered the calls so far, sorted.
func (t *Tape) Producers() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.models))
	for m := range t.models {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Err is the first error writing the recording, if any.
func (t *Tape) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}
