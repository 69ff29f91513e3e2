package cli

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Build is what a binary knows of its making: the version stamped into it
// or recorded by the go command, the commit and its date when it was built
// from a git checkout, and the Go version and platform.
type Build struct {
	Version  string // "1.2.3", "v1.2.3" (go install ...@v1.2.3), a pseudo-version, or "dev"
	Commit   string // vcs.revision; "" when not recorded (go run, go install of a module)
	Date     string // vcs.time: the commit's date, RFC 3339
	Modified bool   // vcs.modified: built with uncommitted changes
	Go       string // "go1.26.8"
	Platform string // "linux/amd64"
}

// ReadBuild is the build of a binary stamped with stamped (-ldflags -X)
// and built as bi says (debug.ReadBuildInfo; nil: no build information). The stamped version wins; without one
// the module version the go command recorded is used (go install
// ...@v1.2.3 records v1.2.3, go build in a checkout a pseudo-version),
// unless it is "(devel)".
func ReadBuild(stamped string, bi *debug.BuildInfo) Build {
	b := Build{Version: stamped, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return b
	}
	if v := bi.Main.Version; (stamped == "" || stamped == "dev") && v != "" && v != "(devel)" {
		b.Version = v
	}
	b.Go = cmp.Or(bi.GoVersion, b.Go)
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Date = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		b.Platform = goos + "/" + goarch
	}
	b.Version = cmp.Or(b.Version, "dev")
	return b
}

// String is `warden version`'s line: "warden 1.2.3 (commit 0123456789ab,
// 2026-11-30T10:00:00Z, go1.26.8 linux/amd64)". What the build did not
// record is left out; a dev build without a commit says how to get one.
func (b Build) String() string {
	var parts []string
	if b.Commit != "" {
		c := "commit " + shortCommit(b.Commit)
		if b.Modified {
			c += " with uncommitted changes"
		}
		parts = append(parts, c)
	}
	if b.Date != "" {
		parts = append(parts, b.Date)
	}
	parts = append(parts, strings.TrimSpace(b.Go+" "+b.Platform))
	if b.Commit == "" && b.Version == "dev" {
		parts = append(parts, "no commit recorded: go run, -buildvcs=false or a build outside a git checkout")
	}
	return fmt.Sprintf("warden %s (%s)", b.Version, strings.Join(parts, ", "))
}

// shortCommit is a commit id's first twelve characters.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
