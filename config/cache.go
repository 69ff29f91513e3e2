package config

import (
	"path/filepath"
	"runtime"
	"strings"

	"github.com/org/warden/review"
)

// LocalResultsCache is the results cache of `warden review`: answers
// already paid for are reused when the same chunk, skill, model and prompt
// come again. It lives in WARDEN_RESULTS_CACHE_DIR, else the user's cache
// directory ($XDG_CACHE_HOME/warden/results, ~/.cache/warden/results;
// ~/Library/Caches/warden/results on macOS). WARDEN_RESULTS_CACHE=off, or
// no such directory, means none.
func LocalResultsCache(getenv func(string) string) *review.Cache {
	if strings.EqualFold(strings.TrimSpace(getenv("WARDEN_RESULTS_CACHE")), "off") {
		return nil
	}
	dir := strings.TrimSpace(getenv("WARDEN_RESULTS_CACHE_DIR"))
	switch {
	case dir != "":
	case getenv("XDG_CACHE_HOME") != "":
		dir = filepath.Join(getenv("XDG_CACHE_HOME"), "warden", "results")
	case getenv("HOME") != "" && runtime.GOOS == "darwin":
		dir = filepath.Join(getenv("HOME"), "Library", "Caches", "warden", "results")
	case getenv("HOME") != "":
		dir = filepath.Join(getenv("HOME"), ".cache", "warden", "results")
	default:
		return nil
	}
	return &review.Cache{Dir: dir, Domain: "local"}
}
