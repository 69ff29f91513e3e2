package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestVersionSaysHowItWasBuilt: `warden --version` of a build nothing was
// stamped into (this test binary, like go run) names the Go version and
// the platform, and says why there is no commit.
func TestVersionSaysHowItWasBuilt(t *testing.T) {
	t.Parallel()
	res := runWarden(t, t.TempDir(), nil, "", "--version")
	want := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if res.code != exitOK || !strings.HasPrefix(res.stdout, "warden ") || !strings.Contains(res.stdout, want) {
		t.Errorf("warden --version = exit %d, %q; want the version with %q", res.code, res.stdout, want)
	}
	if b := wardenBuild(); b.Commit == "" && !strings.Contains(res.stdout, "no commit recorded") {
		t.Errorf("warden --version = %q; a build without a commit does not say why", res.stdout)
	}
}
