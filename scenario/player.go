package scenario

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/org/warden/internal/fakeopenai"
)

// Player is one route's fault schedule played as an OpenAI-compatible
// chat-completions endpoint, in memory (Transport), for `warden eval
// --faults`: each call gets what the schedule says for its number and its
// time since the player was made (a delay, an error status, a hang, a
// broken stream), and a good answer is the one the caller put in the
// request's context (WithAnswer), as a recording made it. A call the
// schedule lets through with no answer in its context (the engine's
// health probe, a request the recording does not have) is answered "OK".
//
// It counts the calls it saw and remembers which answers it delivered
// whole, so that a caller can tell an item a route really answered from
// one an engine only says was answered. A Player is safe for concurrent
// use.
type Player struct {
	origin time.Time
	script func(n int, at time.Duration) fakeopenai.Answer

	mu        sync.Mutex
	calls     int
	inflight  int
	delivered map[string]bool
	quiet     chan struct{} // closed when inflight falls to 0; nil while no one waits (Settle)
}

// Player returns the route's schedule as a Player whose clock starts now,
// at start on the schedule's clock (File.Start).
func (r Route) Player(start time.Duration) *Player {
	p := &Player{origin: time.Now(), delivered: map[string]bool{}}
	p.script = r.Script(start, p.inFlight)
	return p
}

// Healthy is a Player with no schedule: every call answered at once.
func Healthy() *Player {
	return &Player{origin: time.Now(), script: func(int, time.Duration) fakeopenai.Answer { return fakeopenai.Answer{} },
		delivered: map[string]bool{}}
}

// Answer is a good answer to give a call: the recorded content, the model
// that gave it and its token counts, under Key (the caller's name for the
// request, reported by Delivered).
type Answer struct {
	Key              string
	Content          string
	Model            string
	PromptTokens     int
	CompletionTokens int
}

type answerKey struct{}

// WithAnswer returns ctx carrying the good answer the player gives the
// request made with it, when its schedule lets the call through.
func WithAnswer(ctx context.Context, a Answer) context.Context {
	return context.WithValue(ctx, answerKey{}, a)
}

// Transport is the player as an in-memory http.RoundTripper, for an
// OpenAI-compatible client.
func (p *Player) Transport() http.RoundTripper { return fakeopenai.Transport{Handler: p} }

func (p *Player) inFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight
}

// Calls is how many requests the player has seen.
func (p *Player) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Delivered reports whether the player wrote the answer under key whole.
func (p *Player) Delivered(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delivered[key]
}

// Settle waits until the player answers no call, or for at most d. A call
// is delivered once its answer's last byte is written, and a caller that
// stops reading at the end of the JSON (not at the end of the stream) has
// it a moment before the player records it: Delivered is only sure after
// Settle. A call still hanging after d (its caller gone, its context not
// yet ended) delivers nothing.
func (p *Player) Settle(d time.Duration) {
	p.mu.Lock()
	if p.inflight == 0 {
		p.mu.Unlock()
		return
	}
	if p.quiet == nil {
		p.quiet = make(chan struct{})
	}
	quiet := p.quiet
	p.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-quiet:
	case <-t.C:
	}
}

// ServeHTTP answers one chat-completions request as the schedule says.
func (p *Player) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Since(p.origin)
	p.mu.Lock()
	n := p.calls
	p.calls++
	p.inflight++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inflight--
		if p.inflight == 0 && p.quiet != nil {
			close(p.quiet)
			p.quiet = nil
		}
		p.mu.Unlock()
	}()
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &body)
	a, recorded := r.Context().Value(answerKey{}).(Answer)
	if !recorded {
		a = Answer{Content: "OK", Model: body.Model, PromptTokens: 10, CompletionTokens: 1}
	}
	reply := p.script(n, at)
	wire := fakeopenai.Wire{Model: a.Model, Stream: body.Stream, Content: a.Content, PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens,
		ErrorMessage: http.StatusText(reply.Status), ErrorType: "error"}
	// Delivered: written whole, and the answer's own content (not an
	// error, a broken stream or a stream of placeholder tokens).
	whole := fakeopenai.Serve(w, r.Context(), reply, wire)
	if whole && recorded && reply.Status == 0 && !reply.StreamError && reply.Mode != "tokens" {
		p.mu.Lock()
		p.delivered[a.Key] = true
		p.mu.Unlock()
	}
}
