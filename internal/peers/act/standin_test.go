//go:build linux || darwin

package act

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
)

// The actions a workflow or action.yml uses besides the Action itself are
// stand-ins under act: act would clone them from GitHub, and GitHub's
// Actions services are the fake's. Each stand-in is a composite action
// whose one step runs this test binary (standInVar names what to do), so
// the stand-ins are Go, not shell.
const (
	standInVar      = "WARDEN_ACT_STANDIN"
	testBinaryVar   = "WARDEN_ACT_TEST_BINARY"
	runtimeURLVar   = "WARDEN_ACT_RESULTS_URL"   // the job's ACTIONS_RESULTS_URL
	runtimeTokenVar = "WARDEN_ACT_RUNTIME_TOKEN" // the job's ACTIONS_RUNTIME_TOKEN
	checkoutVar     = "WARDEN_ACT_CHECKOUT"      // what the checkout stand-in copies
)

// pinnedRE finds the actions a file uses, pinned by SHA.
var pinnedRE = regexp.MustCompile(`uses: (actions/(?:upload-artifact|checkout))@([0-9a-f]{40})`)

// standIns writes the stand-in actions under dir and returns, for each
// pinned reference the README's workflows and action.yml use, its
// directory (act's --local-repository).
func standIns(t *testing.T, dir string) map[string]string {
	t.Helper()
	root := filepath.Join(dir, "stand-ins")
	actions := map[string]string{
		"actions/upload-artifact": `name: "upload-artifact (stand-in, the fake GitHub's artifact service)"
inputs:
  name: {required: false, default: artifact}
  path: {required: true}
  retention-days: {required: false, default: "0"}
  overwrite: {required: false, default: "false"}
  if-no-files-found: {required: false, default: warn}
  include-hidden-files: {required: false, default: "false"}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        ` + standInVar + `: upload-artifact
        STANDIN_NAME: ${{ inputs.name }}
        STANDIN_PATH: ${{ inputs.path }}
        STANDIN_RETENTION: ${{ inputs.retention-days }}
        STANDIN_OVERWRITE: ${{ inputs.overwrite }}
        STANDIN_IF_NONE: ${{ inputs.if-no-files-found }}
      run: exec "$` + testBinaryVar + `"
`,
		"actions/checkout": `name: "checkout (stand-in, a copy of the test's repository at the run's commit)"
inputs:
  ref: {required: false, default: ""}
  fetch-depth: {required: false, default: "1"}
  persist-credentials: {required: false, default: "true"}
runs:
  using: composite
  steps:
    - shell: bash
      run: cp -a "$` + checkoutVar + `/." "$GITHUB_WORKSPACE/"
`,
	}
	for name, yml := range actions {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "action.yml"), []byte(yml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	files = append(files, filepath.Join(repoRoot(t), "action.yml"), filepath.Join(repoRoot(t), "README.md"))
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pinnedRE.FindAllStringSubmatch(string(data), -1) {
			out[m[1]+"@"+m[2]] = filepath.Join(root, m[1])
		}
	}
	return out
}

// testBinary is this test binary's path, for the stand-ins' steps.
func testBinary(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkoutDir prepares what the checkout stand-in copies: a clone of the
// repository at w.checkout (its objects and refs all there, as
// actions/checkout with fetch-depth: 0 leaves them), or the repository
// itself.
func (w *world) checkoutDir() string {
	w.t.Helper()
	if w.checkout == "" {
		return w.repo
	}
	dir := filepath.Join(w.t.TempDir(), "checkout")
	for _, args := range [][]string{{"clone", "-q", "--no-hardlinks", w.repo, dir}, {"-C", dir, "checkout", "-q", "--detach", w.checkout}} {
		cmd := exec.Command("git", args...)
		cmd.Env = w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			w.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// standIn runs a stand-in action's step, as the test binary act started;
// its exit code is the step's.
func standIn(op string) int {
	ctx := context.Background()
	c := &fakegithub.RuntimeClient{ResultsURL: os.Getenv(runtimeURLVar), Token: os.Getenv(runtimeTokenVar)}
	switch op {
	case "upload-artifact":
		days, _ := strconv.Atoi(os.Getenv("STANDIN_RETENTION"))
		path := os.Getenv("STANDIN_PATH")
		id, err := c.UploadArtifact(ctx, os.Getenv("STANDIN_NAME"), path, days, os.Getenv("STANDIN_OVERWRITE") == "true")
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "upload-artifact (stand-in): %v\n", err)
			return 1
		case id == 0 && os.Getenv("STANDIN_IF_NONE") == "error":
			fmt.Fprintf(os.Stderr, "upload-artifact (stand-in): no files found at %s\n", path)
			return 1
		case id == 0:
			fmt.Printf("upload-artifact (stand-in): no files at %s, nothing uploaded\n", path)
		default:
			fmt.Printf("upload-artifact (stand-in): artifact %s uploaded (id %d)\n", os.Getenv("STANDIN_NAME"), id)
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "stand-in %q: unknown\n", strings.TrimSpace(op))
	return 2
}
