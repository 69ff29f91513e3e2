package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Interval is the least time between two probes of one route (the
// standard's "probe cadence: at most hourly": sub-hourly synthetic traffic
// distorts the backend's latency baselines).
const Interval = time.Hour

// stateFile is the guard's state, in its directory.
const stateFile = "probes.json"

// Guard refuses a second probe of a route within Interval. Its state is a
// small JSON file in Dir (the user's cache directory, see CacheDir): the
// time of the last probe of every route, keyed by route name, base URL
// and model. The zero Dir keeps no state and refuses nothing.
type Guard struct {
	Dir string
	Now func() time.Time // nil: time.Now
}

// TooSoonError is a probe the guard refused: the routes probed within
// Interval, with when.
type TooSoonError struct {
	Routes []string
	Last   []time.Time
	Now    time.Time
}

func (e *TooSoonError) Error() string {
	parts := make([]string, len(e.Routes))
	for i, r := range e.Routes {
		parts[i] = fmt.Sprintf("%q %s ago", r, e.Now.Sub(e.Last[i]).Round(time.Second))
	}
	next := e.Last[0]
	for _, l := range e.Last {
		if l.After(next) {
			next = l
		}
	}
	return fmt.Sprintf("probe refused: route %s was probed (the LiteLLM standard allows one probe an hour; the next at %s, or use --force)",
		strings.Join(parts, ", route "), next.Add(Interval).UTC().Format("15:04 UTC"))
}

// key identifies a route in the state file.
func key(t Target) string {
	return t.Route.Name + " " + RedactURL(t.Route.BaseURL) + " " + t.Route.Model
}

type state struct {
	Probes map[string]time.Time `json:"probes"`
}

func (g Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g Guard) load() (state, error) {
	st := state{Probes: map[string]time.Time{}}
	data, err := os.ReadFile(filepath.Join(g.Dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("probe state: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Probes == nil {
		// A damaged state file must not stop probing for ever: start over.
		return state{Probes: map[string]time.Time{}}, nil
	}
	return st, nil
}

// Check returns a *TooSoonError when a target was probed less than
// Interval ago.
func (g Guard) Check(targets []Target) error {
	if g.Dir == "" {
		return nil
	}
	st, err := g.load()
	if err != nil {
		return err
	}
	now := g.now()
	e := &TooSoonError{Now: now}
	for _, t := range targets {
		if last, ok := st.Probes[key(t)]; ok && now.Sub(last) < Interval && !last.After(now) {
			e.Routes, e.Last = append(e.Routes, t.Route.Name), append(e.Last, last)
		}
	}
	if len(e.Routes) > 0 {
		return e
	}
	return nil
}

// Record notes that the targets were probed now, keeping the other routes'
// entries younger than Interval. It writes the state file atomically,
// creating Dir when needed.
func (g Guard) Record(targets []Target) error {
	if g.Dir == "" {
		return nil
	}
	st, err := g.load()
	if err != nil {
		return err
	}
	now := g.now()
	for k, last := range st.Probes {
		if now.Sub(last) >= Interval {
			delete(st.Probes, k)
		}
	}
	for _, t := range targets {
		st.Probes[key(t)] = now
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(g.Dir, 0o700); err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	tmp, err := os.CreateTemp(g.Dir, stateFile+".*")
	if err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("probe state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(g.Dir, stateFile)); err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	return nil
}

// CacheDir is the guard's directory, warden/probe under the user's cache
// directory, found as os.UserCacheDir finds it but from getenv (so that
// tests and callers choose the environment): $XDG_CACHE_HOME or
// $HOME/.cache on Unix, $HOME/Library/Caches on macOS, %LocalAppData% on
// Windows. It is an error when the environment names none.
func CacheDir(getenv func(string) string) (string, error) {
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = getenv("LocalAppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			dir = filepath.Join(h, "Library", "Caches")
		}
	case "plan9":
		if h := getenv("home"); h != "" {
			dir = filepath.Join(h, "lib", "cache")
		}
	default:
		dir = getenv("XDG_CACHE_HOME")
		if h := getenv("HOME"); dir == "" && h != "" {
			dir = filepath.Join(h, ".cache")
		}
	}
	if dir == "" || !filepath.IsAbs(dir) {
		vars := []string{"XDG_CACHE_HOME", "HOME"}
		if runtime.GOOS == "windows" {
			vars = []string{"LocalAppData"}
		}
		return "", fmt.Errorf("no user cache directory (%s unset or not absolute)", strings.Join(vars, ", "))
	}
	return filepath.Join(dir, "warden", "probe"), nil
}

// Admit is the at-most-hourly guard around one probe of targets: it finds
// the state directory (CacheDir), refuses a probe within Interval of the
// last unless force (a *TooSoonError), and records this one. A problem
// with the state is never a refusal: warn gets it, one line each.
func Admit(getenv func(string) string, targets []Target, force bool, warn func(string)) error {
	guard := Guard{}
	if dir, err := CacheDir(getenv); err != nil {
		warn(fmt.Sprintf("%v: the at-most-hourly guard keeps no state", err))
	} else {
		guard.Dir = dir
	}
	if !force {
		var soon *TooSoonError
		if err := guard.Check(targets); errors.As(err, &soon) {
			return err
		} else if err != nil { // an unreadable state must not stop probing
			warn(err.Error())
		}
	}
	if err := guard.Record(targets); err != nil {
		warn(err.Error())
	}
	return nil
}
