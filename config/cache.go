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
	dir := cacheDir(getenv, "WARDEN_RESULTS_CACHE_DIR", "results")
	if dir == "" {
		return nil
	}
	return &review.Cache{Dir: dir, Domain: "local"}
}

// EvalCacheDir is where `warden eval` keeps the commits of pointer corpora
// and the cases made of them: WARDEN_EVAL_CACHE_DIR, else the user's cache
// directory ($XDG_CACHE_HOME/warden/eval, ~/.cache/warden/eval;
// ~/Library/Caches/warden/eval on macOS); "" when there is none.
func EvalCacheDir(getenv func(string) string) string {
	return cacheDir(getenv, "WARDEN_EVAL_CACHE_DIR", "eval")
}

// cacheDir is the directory variable names, else sub in the user's cache
// directory; "" when there is none.
func cacheDir(getenv func(string) string, variable, sub string) string {
	switch dir := strings.TrimSpace(getenv(variable)); {
	case dir != "":
		return dir
	case getenv("XDG_CACHE_HOME") != "":
		return filepath.Join(getenv("XDG_CACHE_HOME"), "warden", sub)
	case getenv("HOME") != "" && runtime.GOOS == "darwin":
		return filepath.Join(getenv("HOME"), "Library", "Caches", "warden", sub)
	case getenv("HOME") != "":
		return filepath.Join(getenv("HOME"), ".cache", "warden", sub)
	}
	return ""
}
