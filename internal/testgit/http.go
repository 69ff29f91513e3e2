package testgit

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Server serves repositories over git's smart HTTP protocol on loopback:
// git's own http-backend, run as CGI, as GitHub serves
// https://github.com/OWNER/REPO.
type Server struct {
	*httptest.Server
	// Denied counts the requests refused for want of the token.
	Denied atomic.Int64
	// Authorized counts the requests that carried it.
	Authorized atomic.Int64
}

// Serve serves the repository r at URL/r.Name() (for example
// http://127.0.0.1:1234/repo). With a token, every request must carry it
// as an installation token is sent to GitHub over HTTPS: basic
// authentication with the user name x-access-token and the token as the
// password ("git clone https://x-access-token:TOKEN@github.com/OWNER/REPO.git",
// GitHub Docs, "Authenticating as a GitHub App installation",
// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation);
// any other request gets 401, as GitHub answers a private repository.
func Serve(t testing.TB, r *Repo, token string) *Server {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	h := &cgi.Handler{
		Path: backend,
		Root: "/",
		Env:  append(Env(r.Dir), "GIT_PROJECT_ROOT="+filepath.Dir(r.Dir), "GIT_HTTP_EXPORT_ALL=1"),
	}
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if user, pass, ok := req.BasicAuth(); token != "" && (!ok || user != "x-access-token" || pass != token) {
			s.Denied.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "Authentication failed", http.StatusUnauthorized)
			return
		}
		if token != "" {
			s.Authorized.Add(1)
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(s.Close)
	return s
}

// Name is the repository's name on a Server: its directory's base name.
func (r *Repo) Name() string { return filepath.Base(r.Dir) }
