package actiontest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/org/warden/internal/testgit"
)

// release is a loopback stand-in for GitHub release downloads: it serves
// files at /<tag>/<name>, answers 404 to everything else and records every
// request path.
type release struct {
	*httptest.Server
	mu     sync.Mutex
	files  map[string][]byte
	paths  []string
	status int // when not 0, the answer to every request
}

func newRelease(t *testing.T) *release {
	t.Helper()
	r := &release{files: map[string][]byte{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.paths = append(r.paths, req.URL.Path)
		body, ok := r.files[req.URL.Path]
		status := r.status
		r.mu.Unlock()
		if status != 0 {
			http.Error(w, "no", status)
			return
		}
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *release) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.paths)
}

// publish serves a release of a fake warden for linux/amd64 (a shell script
// printing "warden <version>") with its checksums.txt, written by checksums
// when not nil, and its build provenance (attestation: org/warden's release
// workflow at the tag, signed with the trusted key). It returns the
// archive's name.
func (r *release) publish(t *testing.T, tag string, checksums func(asset string, archive []byte) string) string {
	t.Helper()
	version := strings.TrimPrefix(tag, "v")
	asset := fmt.Sprintf("warden_%s_linux_amd64.tar.gz", version)
	archive := tarGz(t, map[string]string{
		"warden":    "#!/bin/sh\necho \"warden " + version + "\"\n",
		"README.md": "# warden\n",
	})
	if checksums == nil {
		checksums = func(asset string, archive []byte) string {
			return fmt.Sprintf("%x  %s\n%x  warden_%s_darwin_arm64.tar.gz\n", sha256.Sum256(archive), asset, sha256.Sum256([]byte("other")), version)
		}
	}
	r.mu.Lock()
	r.files["/"+tag+"/"+asset] = archive
	r.files["/"+tag+"/checksums.txt"] = []byte(checksums(asset, archive))
	r.files["/"+tag+"/"+provenanceBundle] = attestation{}.bundle(tag, asset, archive)
	r.mu.Unlock()
	return asset
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runner is the environment of one install.sh run: a fresh runner temp
// directory, tool cache, GITHUB_PATH and GITHUB_OUTPUT.
type runner struct {
	dir, cache, pathFile, outputFile string
	env                              map[string]string
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("install.sh tests run on Unix; Windows runners use Git Bash")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	dir := t.TempDir()
	r := &runner{
		dir:        dir,
		cache:      filepath.Join(dir, "toolcache"),
		pathFile:   filepath.Join(dir, "github_path"),
		outputFile: filepath.Join(dir, "github_output"),
	}
	r.env = map[string]string{
		"GITHUB_ACTION_PATH": root(t),
		"GITHUB_SERVER_URL":  "http://127.0.0.1:1", // nothing listens: no default URL may be used
		"GITHUB_PATH":        r.pathFile,
		"GITHUB_OUTPUT":      r.outputFile,
		"RUNNER_TEMP":        dir,
		"RUNNER_TOOL_CACHE":  r.cache,
		"RUNNER_OS":          "Linux",
		"RUNNER_ARCH":        "X64",
		// The stand-in `gh attestation verify` and the key it trusts.
		"PATH":                 ghverifyDir + string(filepath.ListSeparator) + os.Getenv("PATH"),
		"GHVERIFY_TRUSTED_KEY": trustedKeyFile,
	}
	return r
}

// install runs scripts/install.sh and returns its combined output and the
// error of a non-zero exit.
func (r *runner) install(t *testing.T) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root(t), "scripts", "install.sh"))
	cmd.Dir = r.dir
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "WARDEN_") || strings.HasPrefix(k, "INPUT_") {
			continue
		}
		if _, ok := r.env[k]; !ok {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range r.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// outputs reads the step outputs install.sh wrote.
func (r *runner) outputs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(r.outputFile)
	if err != nil {
		t.Fatalf("GITHUB_OUTPUT: %v", err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

// version runs the installed binary's version command.
func version(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestInstallDownloadsVerifiedRelease(t *testing.T) {
	t.Parallel()
	rel := newRelease(t)
	asset := rel.publish(t, "v1.2.3", nil)
	r := newRunner(t)
	r.env["WARDEN_ACTION_REF"] = "v1.2.3"
	r.env["WARDEN_ACTION_REPOSITORY"] = "org/warden"
	r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL + "/"

	out, err := r.install(t)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	o := r.outputs(t)
	wantBin := filepath.Join(r.cache, "warden", "1.2.3", "amd64", "warden")
	if o["path"] != wantBin || o["source"] != "release" || o["version"] != "1.2.3" {
		t.Errorf("outputs %v, want path %s, source release, version 1.2.3\n%s", o, wantBin, out)
	}
	if got := version(t, o["path"]); got != "warden 1.2.3" {
		t.Errorf("installed binary says %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.cache, "warden", "1.2.3", "amd64.complete")); err != nil {
		t.Errorf("no tool-cache completion marker: %v", err)
	}
	if data, _ := os.ReadFile(r.pathFile); strings.TrimSpace(string(data)) != filepath.Dir(wantBin) {
		t.Errorf("GITHUB_PATH = %q, want %s", data, filepath.Dir(wantBin))
	}
	for _, want := range []string{"verified SHA-256 of " + asset, rel.URL + "/v1.2.3/" + asset} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}

	// A second run finds the verified binary in the tool cache.
	before := len(rel.requests())
	os.Remove(r.outputFile)
	out, err = r.install(t)
	if err != nil {
		t.Fatalf("second install: %v\n%s", err, out)
	}
	if o := r.outputs(t); o["source"] != "cache" || o["path"] != wantBin {
		t.Errorf("second run outputs %v, want source cache\n%s", o, out)
	}
	if n := len(rel.requests()); n != before {
		t.Errorf("second run downloaded again: %v", rel.requests()[before:])
	}
}

func TestInstallRejectsBadChecksum(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		checksums func(asset string, archive []byte) string
		want      []string
	}{
		{"mismatch", func(asset string, _ []byte) string {
			return fmt.Sprintf("%x  %s\n", sha256.Sum256([]byte("tampered")), asset)
		}, []string{"SHA-256 mismatch", "warden_1.2.3_linux_amd64.tar.gz"}},
		{"binary-mode mismatch", func(asset string, _ []byte) string {
			return fmt.Sprintf("%X *%s\n", sha256.Sum256([]byte("tampered")), asset)
		}, []string{"SHA-256 mismatch", "warden_1.2.3_linux_amd64.tar.gz"}},
		{"no entry", func(asset string, archive []byte) string {
			return fmt.Sprintf("%x  %s.sbom.json\n", sha256.Sum256(archive), asset)
		}, []string{"no entry for warden_1.2.3_linux_amd64.tar.gz"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rel := newRelease(t)
			rel.publish(t, "v1.2.3", c.checksums)
			r := newRunner(t)
			r.env["WARDEN_ACTION_REF"] = "v1.2.3"
			r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL

			out, err := r.install(t)
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("install: %v, want a non-zero exit\n%s", err, out)
			}
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("output does not say %q:\n%s", want, out)
				}
			}
			// Nothing unverified is installed, and no build from source
			// hides the failure.
			if strings.Contains(out, "building warden") {
				t.Errorf("fell back to a source build:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(r.cache, "warden", "1.2.3")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the tool cache holds 1.2.3 after a failed verification: %v", err)
			}
			if data, _ := os.ReadFile(r.pathFile); len(data) != 0 {
				t.Errorf("GITHUB_PATH = %q after a failure", data)
			}
		})
	}
}

// TestInstallDownloadErrorIsLoud: only a 404 means "no release"; another
// error fails the step rather than hide behind a source build.
func TestInstallDownloadErrorIsLoud(t *testing.T) {
	t.Parallel()
	rel := newRelease(t)
	rel.publish(t, "v1.2.3", nil)
	rel.mu.Lock()
	rel.status = http.StatusForbidden
	rel.mu.Unlock()
	r := newRunner(t)
	r.env["WARDEN_ACTION_REF"] = "v1.2.3"
	r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL

	out, err := r.install(t)
	if err == nil {
		t.Fatalf("install succeeded on HTTP 403:\n%s", out)
	}
	if !strings.Contains(out, "/v1.2.3/checksums.txt failed (HTTP 403)") || strings.Contains(out, "building warden") {
		t.Errorf("want a failure naming checksums.txt and HTTP 403, no source build:\n%s", out)
	}
}

func TestInstallExplicitVersionWithoutReleaseFails(t *testing.T) {
	t.Parallel()
	rel := newRelease(t)
	r := newRunner(t)
	r.env["WARDEN_VERSION"] = "2.0.0"
	r.env["WARDEN_ACTION_REF"] = "main"
	r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL

	out, err := r.install(t)
	if err == nil {
		t.Fatalf("install succeeded without a release:\n%s", out)
	}
	if !strings.Contains(out, "v2.0.0") || strings.Contains(out, "building warden") {
		t.Errorf("want a failure naming v2.0.0 and no source build:\n%s", out)
	}
	if got := rel.requests(); !slices.Contains(got, "/v2.0.0/checksums.txt") {
		t.Errorf("requests %v, want /v2.0.0/checksums.txt", got)
	}
}

// TestInstallTakesRefFromActionPath: the runner checks an action out at
// _actions/<owner>/<repo>/<ref>, which install.sh prefers over the
// github.action_* expressions (empty or wrong in nested composite actions).
func TestInstallTakesRefFromActionPath(t *testing.T) {
	t.Parallel()
	rel := newRelease(t)
	rel.publish(t, "v1.2.3", nil)
	r := newRunner(t)
	path := filepath.Join(r.dir, "_actions", "org", "warden", "v1.2.3")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root(t), path); err != nil {
		t.Fatal(err)
	}
	r.env["GITHUB_ACTION_PATH"] = path
	r.env["WARDEN_ACTION_REF"] = "v9.9.9" // a wrapping action's ref
	r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL

	out, err := r.install(t)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if o := r.outputs(t); o["version"] != "1.2.3" || o["source"] != "release" {
		t.Errorf("outputs %v, want release 1.2.3\n%s", o, out)
	}
	if !strings.Contains(out, "org/warden@v1.2.3 (its path)") {
		t.Errorf("output does not explain the ref it used:\n%s", out)
	}
}

// TestInstallResolvesMovingTagAndSHA: @v1 and @<sha> get the release of the
// vX.Y.Z tag on the same commit, found with git ls-remote.
func TestInstallResolvesMovingTagAndSHA(t *testing.T) {
	t.Parallel()
	r := testgit.New(t)
	repo := r.Dir
	git := func(args ...string) string { t.Helper(); return strings.TrimSpace(r.Git(args...)) }
	git("commit", "-q", "--allow-empty", "-m", "one")
	git("tag", "-a", "-m", "v1.2.2", "v1.2.2")
	old := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "two")
	git("tag", "-a", "-m", "v1.2.3", "v1.2.3")
	git("tag", "v1") // lightweight, like a moved major tag
	git("tag", "v1.2")
	git("tag", "-a", "-m", "other major", "v2.0.0")
	git("commit", "-q", "--allow-empty", "-m", "three")
	git("tag", "-a", "-m", "unreleased", "v1.2.4") // not on v1's commit

	rel := newRelease(t)
	rel.publish(t, "v1.2.2", nil)
	rel.publish(t, "v1.2.3", nil)
	for _, c := range []struct{ ref, want string }{
		{"v1", "1.2.3"},
		{"v1.2", "1.2.3"},
		{old, "1.2.2"},
	} {
		t.Run(c.ref, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			r.env["WARDEN_ACTION_REF"] = c.ref
			r.env["WARDEN_ACTION_REPOSITORY"] = "org/warden"
			r.env["WARDEN_GIT_URL"] = repo
			r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL
			out, err := r.install(t)
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			if o := r.outputs(t); o["version"] != c.want || o["source"] != "release" {
				t.Errorf("outputs %v, want release %s\n%s", o, c.want, out)
			}
		})
	}
}

// TestInstallBuildsFromSource runs the fallback for real: the ref's release
// does not exist (404), so install.sh builds this repository's cmd/warden
// with the machine's Go, and the binary reports the ref as its version.
func TestInstallBuildsFromSource(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	rel := newRelease(t)
	r := newRunner(t)
	r.env["WARDEN_ACTION_REF"] = "v9.9.9"
	r.env["WARDEN_ACTION_REPOSITORY"] = "org/warden"
	r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL

	out, err := r.install(t)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if got := rel.requests(); !slices.Contains(got, "/v9.9.9/checksums.txt") {
		t.Errorf("requests %v: the release was not tried first", got)
	}
	o := r.outputs(t)
	if o["source"] != "source" || o["version"] != "v9.9.9" {
		t.Errorf("outputs %v, want source source, version v9.9.9\n%s", o, out)
	}
	if !strings.HasPrefix(o["path"], r.dir) {
		t.Errorf("binary %s is outside RUNNER_TEMP %s", o["path"], r.dir)
	}
	if got := version(t, o["path"]); !strings.HasPrefix(got, "warden v9.9.9 (") || !strings.Contains(got, "go1.") {
		t.Errorf("built binary says %q", got)
	}
	if !strings.Contains(out, "building warden v9.9.9 from source") {
		t.Errorf("output does not say where the binary came from:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(r.cache, "warden", "9.9.9")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a source build went into the tool cache: %v", err)
	}
}

// TestInstallWithoutGoFails: no release and no Go is a clear failure that
// tells the user to add actions/setup-go.
func TestInstallWithoutGoFails(t *testing.T) {
	t.Parallel()
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			continue
		}
		keep = append(keep, dir)
	}
	path := strings.Join(keep, string(filepath.ListSeparator))
	for _, tool := range []string{"bash", "awk", "mktemp", "dirname", "uname", "tr"} {
		if !toolIn(path, tool) {
			t.Skipf("%s shares a directory with go: cannot hide go from the script", tool)
		}
	}
	r := newRunner(t)
	r.env["PATH"] = path
	r.env["WARDEN_ACTION_REF"] = "main"
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, filepath.Join(root(t), "scripts", "install.sh"))
	cmd.Dir = r.dir
	cmd.Env = []string{"HOME=" + r.dir}
	for k, v := range r.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("install succeeded without Go:\n%s", out)
	}
	for _, want := range []string{"ref main is not a release tag", "needs Go", "actions/setup-go"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
}

func toolIn(path, tool string) bool {
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, tool)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}
