package ollama

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
)

// tinyModel is the name the tiny model is registered under, and its
// Modelfile: a plain role template, a 512-token context and a fixed
// sampling seed.
const tinyModel = "warden-tiny"

var (
	tinyTemplate = "{{- range .Messages }}{{ .Role }}: {{ .Content }}\n{{ end }}assistant: "
	tinyParams   = map[string]any{"num_ctx": 512, "seed": 42}
)

// The peer, set up once by TestMain for every test.
var peer struct {
	bin     string // the ollama binary
	missing string // why there is no server; "" when there is one
	strict  bool   // CI=true or WARDEN_REAL_PEERS=1: a missing peer fails
	scratch string // temporary directory of the servers
	models  string // OLLAMA_MODELS, shared by every server
	main    *Server
	path    string // PATH for the servers
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

// servers are every server the tests started, for stopAll.
var servers struct {
	mu   sync.Mutex
	live []*Server
}

// stopAll stops every server the tests started (Close is safe to repeat).
func stopAll() {
	servers.mu.Lock()
	live := servers.live
	servers.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Go(func() { _ = s.Close() })
	}
	wg.Wait()
}

// stopBeforeTimeout stops every server shortly before go test's -timeout
// (10 minutes by default) ends the binary with a panic that runs no
// deferred call: a server's Close takes up to 10 s, so the stop starts
// min(30 s, a tenth of the timeout) before. The kernel's parent-death
// signal (procAttr) covers the deaths nothing can see coming. The
// returned func cancels it.
func stopBeforeTimeout() func() {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return func() {}
	}
	d, _ := f.Value.(flag.Getter).Get().(time.Duration)
	if d <= 0 {
		return func() {}
	}
	margin := min(30*time.Second, d/10)
	t := time.AfterFunc(d-margin, func() {
		fmt.Fprintf(os.Stderr, "ollama tier: the %v test timeout ends in %v: stopping every ollama server now\n", d, margin)
		stopAll()
	})
	return func() { t.Stop() }
}

func runMain(m *testing.M) int {
	flag.Parse() // for -test.timeout
	defer stopBeforeTimeout()()
	defer stopAll()
	peer.strict = os.Getenv("CI") == "true" || os.Getenv("WARDEN_REAL_PEERS") == "1"
	peer.path = os.Getenv("PATH")
	peer.bin = os.Getenv("WARDEN_OLLAMA_BIN")
	if peer.bin == "" {
		home, _ := os.UserHomeDir()
		peer.bin = filepath.Join(home, ".cache", "warden-peers", "bin", "ollama")
	}
	if _, err := os.Stat(peer.bin); err != nil {
		peer.missing = fmt.Sprintf("ollama binary not found at %s: .ci/run builds it (go install github.com/ollama/ollama@v0.6.5; set WARDEN_OLLAMA_BIN)", peer.bin)
		return m.Run()
	}
	if dir := os.Getenv(orphanEnv); dir != "" {
		return orphan(dir) // TestServerDiesWithTestProcess's helper: it never returns
	}
	dir, err := os.MkdirTemp("", "warden-ollama-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	peer.scratch = dir
	peer.models = filepath.Join(dir, "models")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := startServer(ctx, "main")
	if err != nil {
		peer.missing = fmt.Sprintf("ollama at %s did not start: %v", peer.bin, err)
		peer.strict = true // the binary is there: a failure to run it is always a failure
		return m.Run()
	}
	peer.main = srv
	defer srv.Close()
	var gguf bytes.Buffer
	if err := WriteTinyModel(&gguf, 42); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = srv.CreateModel(ctx, Model{Name: tinyModel, GGUF: gguf.Bytes(), Template: tinyTemplate, Parameters: tinyParams})
	if err != nil {
		peer.missing = fmt.Sprintf("create the tiny model: %v\nserver log:\n%s", err, srv.Tail())
		peer.strict = true
		return m.Run()
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- ollama serve log (%s), last lines:\n%s\n", srv.Log, srv.Tail())
	}
	return code
}

// startServer starts a server named name (its scratch directory) on the
// shared models directory, with extra environment entries.
func startServer(ctx context.Context, name string, env ...string) (*Server, error) {
	s, err := Start(ctx, Config{
		Binary:    peer.bin,
		Dir:       filepath.Join(peer.scratch, name),
		ModelsDir: peer.models,
		Env:       append([]string{"PATH=" + peer.path}, env...),
	})
	if err == nil {
		servers.mu.Lock()
		servers.live = append(servers.live, s)
		servers.mu.Unlock()
	}
	return s, err
}

// mainServer returns the server TestMain started, or ends the test: it fails
// when the peer is required (CI=true, WARDEN_REAL_PEERS=1, or the binary
// is there but would not run) and skips otherwise.
func mainServer(t *testing.T) *Server {
	t.Helper()
	if peer.missing != "" {
		if peer.strict {
			t.Fatal(peer.missing)
		}
		t.Skip(peer.missing)
	}
	return peer.main
}

// recorder keeps the bodies of every request sent and answer received
// through it, for assertions on what crossed the wire.
type recorder struct {
	base http.RoundTripper

	mu        sync.Mutex
	exchanges []exchange
}

type exchange struct {
	request  []byte
	status   int
	header   http.Header
	response []byte // the whole body, streamed or not
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.exchanges = append(r.exchanges, exchange{request: body, status: resp.StatusCode, header: resp.Header.Clone()})
	i := len(r.exchanges) - 1
	r.mu.Unlock()
	resp.Body = &recordedBody{ReadCloser: resp.Body, r: r, i: i}
	return resp, nil
}

type recordedBody struct {
	io.ReadCloser
	r *recorder
	i int
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.r.mu.Lock()
	b.r.exchanges[b.i].response = append(b.r.exchanges[b.i].response, p[:n]...)
	b.r.mu.Unlock()
	return n, err
}

func (r *recorder) all() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]exchange, len(r.exchanges))
	for i, e := range r.exchanges {
		out[i] = e
		out[i].response = bytes.Clone(e.response)
	}
	return out
}

// newProvider returns warden's real OpenAI-compatible provider for srv's
// /v1 API, with a recorder on its transport.
func newProvider(t *testing.T, srv *Server) (*openai.Provider, *recorder) {
	t.Helper()
	rec := &recorder{base: http.DefaultTransport}
	p, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	return p, rec
}

// testPolicy is the default policy with budgets that fit a test and a
// backoff short enough not to matter; the real server's own time is real.
func testPolicy() execution.Policy {
	p := execution.DefaultPolicy()
	// Generous ceilings: a tiny model on a loaded 2-core machine (CI runs
	// other packages' tests beside this one) can take a minute per answer.
	// The tests check behaviour, never latency.
	p.Budget = 9 * time.Minute
	p.ItemBudget = 4 * time.Minute
	p.RequestTimeout = 3 * time.Minute
	p.MinAttempt = time.Second
	p.Reserve = time.Second
	p.Backoff = 50 * time.Millisecond
	return p
}

// newEngine returns an engine on routes with testPolicy changed by mod.
func newEngine(t *testing.T, routes []execution.Route, mod func(*execution.Policy), opts execution.Options) *execution.Engine {
	t.Helper()
	p := testPolicy()
	if mod != nil {
		mod(&p)
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(1, 2))
	}
	e, err := execution.New(routes, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
