package cli

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadBuild: the stamped version wins, else the module version the go
// command recorded (not "(devel)"); the commit, its date and uncommitted
// changes come from the VCS settings, the platform from GOOS/GOARCH.
func TestReadBuild(t *testing.T) {
	t.Parallel()
	vcs := []debug.BuildSetting{
		{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"},
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}
	cases := []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"release", "1.2.3", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs[:2]},
			"warden 1.2.3 (go1.26.8 darwin/arm64)"},
		{"go build in a checkout", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261130100000-0123456789ab+dirty"}, Settings: vcs},
			"warden v0.0.0-20261130100000-0123456789ab+dirty (commit 0123456789ab with uncommitted changes, 2026-11-30T10:00:00Z, go1.26.8 darwin/arm64)"},
		{"stamped source build", "local-0123456", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs[:5]},
			"warden local-0123456 (commit 0123456789ab, 2026-11-30T10:00:00Z, go1.26.8 darwin/arm64)"},
		{"go install at a version", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: vcs[:2]},
			"warden v1.2.3 (go1.26.8 darwin/arm64)"},
		{"go run", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs[:2]},
			"warden dev (go1.26.8 darwin/arm64, no commit recorded: go run, -buildvcs=false or a build outside a git checkout)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.want, ReadBuild(c.stamped, c.bi).String()); diff != "" {
				t.Errorf("ReadBuild(%q, ...) (-want +got):\n%s", c.stamped, diff)
			}
		})
	}
	if got := ReadBuild("dev", nil); got.Version != "dev" || got.Go != runtime.Version() {
		t.Errorf("readBuild without build information = %+v, want dev and this Go", got)
	}
}
