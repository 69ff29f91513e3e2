package hunks

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrBadGlob is returned (wrapped, with the pattern quoted in the message) for
// a pattern that is not valid doublestar syntax.
var ErrBadGlob = errors.New("bad glob")

// ValidateGlob reports whether pattern is a valid doublestar pattern, as used
// by Options.Ignore and NewPathFilter: one leading "!" (negation) is allowed.
// The error wraps ErrBadGlob and names the pattern.
func ValidateGlob(pattern string) error {
	p := strings.TrimPrefix(pattern, "!")
	switch {
	case p == "":
		return fmt.Errorf("%w %q: empty pattern", ErrBadGlob, pattern)
	case !doublestar.ValidatePattern(p):
		return fmt.Errorf("%w %q: %w", ErrBadGlob, pattern, doublestar.ErrBadPattern)
	}
	return nil
}

// rule is one compiled glob: pattern as written, glob without its "!".
type rule struct {
	pattern, glob string
	negate        bool
}

// rules is an ordered list of globs where the last matching one wins.
type rules []rule

func compile(patterns []string) (rules, error) {
	rs := make(rules, 0, len(patterns))
	for _, p := range patterns {
		if err := ValidateGlob(p); err != nil {
			return nil, err
		}
		glob, negate := strings.CutPrefix(p, "!")
		rs = append(rs, rule{pattern: p, glob: glob, negate: negate})
	}
	return rs, nil
}

// lastMatch returns the last rule matching name.
func (rs rules) lastMatch(name string) (rule, bool) {
	for i := len(rs) - 1; i >= 0; i-- {
		if doublestar.MatchUnvalidated(rs[i].glob, name) {
			return rs[i], true
		}
	}
	return rule{}, false
}

// PathFilter selects paths for one skill. Its methods are safe for concurrent
// use; a nil *PathFilter matches every path.
type PathFilter struct {
	paths, ignore rules
}

// NewPathFilter returns a filter matching a path when the last pattern of
// paths that matches it is not negated (every path, when paths is empty) and
// no pattern of ignore matches it, or the last one that does is negated
// ("!"). Patterns use doublestar syntax against slash-separated paths
// relative to the repository root, such as "**/*.go". The error wraps
// ErrBadGlob and names the first bad pattern.
func NewPathFilter(paths, ignore []string) (*PathFilter, error) {
	p, err := compile(paths)
	if err != nil {
		return nil, err
	}
	i, err := compile(ignore)
	if err != nil {
		return nil, err
	}
	return &PathFilter{paths: p, ignore: i}, nil
}

// Match reports whether the filter selects path.
func (f *PathFilter) Match(path string) bool {
	if f == nil {
		return true
	}
	if len(f.paths) > 0 {
		if r, ok := f.paths.lastMatch(path); !ok || r.negate {
			return false
		}
	}
	r, ok := f.ignore.lastMatch(path)
	return !ok || r.negate
}

// The built-in filters by path. Names are exact base names; suffixes are
// compared with the lower-cased base name.
var (
	vendorDirs = set("vendor", "node_modules", "bower_components", "dist", "build")
	lockfiles  = set("go.sum", "go.work.sum", "package-lock.json", "npm-shrinkwrap.json",
		"yarn.lock", "pnpm-lock.yaml", "bun.lock", "bun.lockb", "deno.lock", "Cargo.lock",
		"poetry.lock", "Pipfile.lock", "pdm.lock", "uv.lock", "Gemfile.lock", "composer.lock",
		"mix.lock", "pubspec.lock", "Podfile.lock", "Package.resolved", "packages.lock.json",
		"flake.lock", "gradle.lockfile", "conan.lock")
	minifiedSuffixes = []string{".min.js", ".min.mjs", ".min.cjs", ".min.css", ".bundle.js",
		".bundle.mjs", ".bundle.css", ".map"}
	generatedSuffixes = []string{".pb.go", ".pb.gw.go", "_generated.go", ".gen.go",
		"_pb2.py", "_pb2_grpc.py", "_pb2.pyi", ".pb.cc", ".pb.h", "_pb.js", "_pb.d.ts",
		"_grpc_pb.js", ".g.dart", ".freezed.dart", ".designer.cs", ".g.cs"}
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// builtinReason returns the reason a built-in filter drops p by its name:
// "vendored", "lockfile", "minified", "generated", or "" to keep it.
func builtinReason(p string) string {
	dir, base := path.Split(p)
	for seg := range strings.SplitSeq(strings.TrimSuffix(dir, "/"), "/") {
		if vendorDirs[seg] {
			return "vendored"
		}
	}
	if lockfiles[base] {
		return "lockfile"
	}
	lower := strings.ToLower(base)
	for _, s := range minifiedSuffixes {
		if strings.HasSuffix(lower, s) {
			return "minified"
		}
	}
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(lower, s) {
			return "generated"
		}
	}
	if strings.HasPrefix(lower, "zz_generated.") || strings.Contains(lower, ".generated.") {
		return "generated"
	}
	return ""
}

// generatedMarker matches Go's convention for generated files
// (https://go.dev/s/generatedcode), written in any language's line comment,
// and the "@generated" tag used by Meta's and other tools.
var generatedMarker = regexp.MustCompile(`^(?://|#|--|;+|/?\*+|<!--)\s*Code generated .* DO NOT EDIT\.|@generated\b`)

// markerLines is how many lines at the top of a file are searched for a
// generated-code marker.
const markerLines = 10

// isGenerated reports whether one of lines (a file's first lines) carries a
// generated-code marker.
func isGenerated(lines []string) bool {
	for _, l := range lines[:min(len(lines), markerLines)] {
		if generatedMarker.MatchString(strings.TrimSpace(l)) {
			return true
		}
	}
	return false
}
