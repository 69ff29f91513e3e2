package ollama

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// Config says how to start a server.
type Config struct {
	// Binary is the path of the ollama executable (v0.6.5).
	Binary string
	// Dir is a scratch directory the server owns: its HOME, its log
	// (serve.log) and, unless ModelsDir is set, its models.
	Dir string
	// ModelsDir, when set, is OLLAMA_MODELS: servers may share one so that
	// a model is created once.
	ModelsDir string
	// Env holds extra environment entries ("OLLAMA_MAX_QUEUE=1", "PATH=...").
	// The server gets only these and what Start sets itself: HOME,
	// OLLAMA_HOST, OLLAMA_MODELS, OLLAMA_NOPRUNE and OLLAMA_NOHISTORY.
	Env []string
}

// Server is a running `ollama serve` on a loopback port.
type Server struct {
	// URL is the server's root, http://127.0.0.1:<port>; its
	// OpenAI-compatible API is URL + "/v1".
	URL string
	// Log is the file that holds the server's output.
	Log string

	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has ended
	err    error         // the process's exit error, set before exited closes
}

// Start starts `ollama serve` on a free loopback port with the
// configuration's directories and environment, and returns once the server
// answers (or ctx ends, or the process exits). The caller must Close it.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if _, err := os.Stat(cfg.Binary); err != nil {
		return nil, fmt.Errorf("ollama binary: %w", err)
	}
	models := cfg.ModelsDir
	if models == "" {
		models = filepath.Join(cfg.Dir, "models")
	}
	home := filepath.Join(cfg.Dir, "home")
	for _, d := range []string{home, models} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(cfg.Dir, "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor

	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(cfg.Binary, "serve")
	cmd.Env = append([]string{
		"HOME=" + home,
		"OLLAMA_HOST=" + host,
		"OLLAMA_MODELS=" + models,
		"OLLAMA_NOPRUNE=1", // another server may be writing a blob into a shared models dir
		"OLLAMA_NOHISTORY=1",
	}, cfg.Env...)
	cmd.Dir = cfg.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so that Close can end the runner processes
	// it starts if it does not end them itself; and, where the system has
	// one, a signal when the process that started it dies (procAttr).
	cmd.SysProcAttr = procAttr()
	s := &Server{URL: "http://" + host, Log: logPath, cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() { // ends when the process does; Close waits for it
		// Linux sends the parent-death signal when the thread that
		// started the child ends, not only the process: this goroutine
		// keeps that thread, waiting, for as long as the server runs.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("start %s serve: %w", cfg.Binary, err)
			return
		}
		started <- nil
		s.err = cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("%w (log: %s)", err, tail(logPath))
	}
	return s, nil
}

// waitReady polls GET / until the server answers 200.
func (s *Server) waitReady(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ollama serve at %s did not answer: %w", s.URL, ctx.Err())
		case <-s.exited:
			return fmt.Errorf("ollama serve exited before answering: %v", s.err)
		case <-tick.C:
		}
	}
}

// Close stops the server: SIGTERM (on which it stops its runners), then,
// if it is still running after 10 seconds, SIGKILL to its process group
// (the server and the runners it started). It returns once the process has
// ended.
func (s *Server) Close() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-s.exited:
	case <-t.C:
		// Still running, so the group id is still its own.
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	return nil
}

// Model describes a model to create from a GGUF file.
type Model struct {
	Name       string
	GGUF       []byte
	Template   string         // a Go template, as in a Modelfile's TEMPLATE
	Parameters map[string]any // as in a Modelfile's PARAMETER lines: num_ctx, seed, ...
}

// CreateModel registers m with the server the way v0.6.5's own client does
// for a Modelfile whose FROM is a GGUF file: the file is uploaded as a blob
// (POST /api/blobs/sha256:<digest>), then POST /api/create names it in
// "files", with the template and parameters. (v0.6.5 reads no "modelfile"
// text any more; its CLI parses the Modelfile and sends these fields.)
func (s *Server) CreateModel(ctx context.Context, m Model) error {
	sum := sha256.Sum256(m.GGUF)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	// Server API docs: https://github.com/ollama/ollama/blob/v0.6.5/docs/api.md#push-a-blob
	status, body, err := s.post(ctx, "/api/blobs/"+digest, "application/octet-stream", m.GGUF)
	if err != nil {
		return err
	}
	if status != http.StatusCreated && status != http.StatusOK {
		return fmt.Errorf("upload blob %s: %d %s", digest, status, body)
	}
	stream := false
	req, err := json.Marshal(map[string]any{
		"model":      m.Name,
		"files":      map[string]string{m.Name + ".gguf": digest},
		"template":   m.Template,
		"parameters": m.Parameters,
		"stream":     &stream,
	})
	if err != nil {
		return err
	}
	// Server API docs: https://github.com/ollama/ollama/blob/v0.6.5/docs/api.md#create-a-model
	status, body, err = s.post(ctx, "/api/create", "application/json", req)
	if err != nil {
		return err
	}
	var res struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(body, &res); err != nil || status != http.StatusOK || res.Status != "success" {
		return fmt.Errorf("create model %s: %d %s", m.Name, status, body)
	}
	return nil
}

func (s *Server) post(ctx context.Context, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("POST %s: read answer: %w", path, err)
	}
	return resp.StatusCode, bytes.TrimSpace(b), nil
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before the server binds it; Start then fails, loudly.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last few KB of a log file, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	const n = 4000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Tail returns the end of the server's log, for a failing test's message.
func (s *Server) Tail() string { return tail(s.Log) }
