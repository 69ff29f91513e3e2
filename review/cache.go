package review

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/org/warden/execution"
)

// CacheFormat names the keying rules of CacheKey, which eval's recordings
// use too. The results cache's own entries are ResultsFormat's.
const CacheFormat = "warden.results/v1"

// ResultsFormat names the results cache's entry format and keying rules:
// CacheKey's, with the route's endpoint (its base URL's host) in the key,
// so that a route pointed at another server never reads the answers of
// the one before. It is part of every key: changing how keys are derived
// or what an entry holds means changing it, so that old entries are
// misses, never misread.
const ResultsFormat = "warden.results/v2"

// DefaultCacheMaxBytes bounds a results cache whose MaxBytes is not set:
// 64 MiB, about 30,000 answers of 2 KiB.
const DefaultCacheMaxBytes = 64 << 20

// maxEntryBytes caps one entry on disk: the engine caps an answer at
// 1 MiB, and an entry is that answer and a few names.
const maxEntryBytes = 1<<20 + 4096

// Cache is the results cache: the model's answer to each finished work
// item, keyed by everything that determines it, so that a re-run (a
// `/warden resume`, or a push that leaves a chunk as it was) calls the
// model only for what has no answer yet. It lives in one directory, one
// file per entry (Dir/ab/abcdef…), which the caller chooses: the user's
// cache directory locally, a directory the Actions cache restores and saves
// on GitHub Actions.
//
// A key is the SHA-256 of ResultsFormat, Domain, the model, the route's
// endpoint (the host of its base URL), and the exact request: its messages (the system message holds the prompt's version and
// the skill's text, the user message the chunk and its context), its
// schema and its max_tokens. An entry carries its own key and a checksum of
// its answer (an HMAC with Secret when set); an entry that does not parse,
// names another key, fails its checksum or is too large is a miss (counted
// in Stats.Corrupt), never an error and never a clean-looking result.
//
// Trust: Domain separates runs that must not feed each other. A run that
// reviews untrusted code with no secrets (a fork's pull_request) uses a
// different Domain than the privileged run (pull_request_target,
// issue_comment), so its entries have other keys and the privileged run
// never reads them, even from a shared directory; with Secret (which only
// the privileged run holds) an entry forged under the privileged run's key
// fails its HMAC. The Action keeps the two apart in storage as well:
// each domain is a directory and a workflow artifact of its own, and a
// privileged run never reads an artifact of a run that executed a fork's
// workflow file (ghbot.Store).
//
// A Cache is safe for concurrent use. The zero value is not usable: Dir
// must be set.
type Cache struct {
	// Dir holds the entries; it is created on the first Put.
	Dir string
	// MaxBytes bounds the entries' total size; the least recently used go
	// first. <= 0 means DefaultCacheMaxBytes.
	MaxBytes int64
	// Domain separates trust levels (e.g. "trusted", "fork"); part of
	// every key.
	Domain string
	// Secret, when set, signs every entry (HMAC-SHA256) so that an entry
	// written without it is a miss.
	Secret []byte
	// WriteOnly keeps new answers but reads none: a fresh review that
	// still saves what it paid for.
	WriteOnly bool

	mu    sync.Mutex
	stats CacheStats
	size  int64 // the entries' total, once sized
	sized bool  // size is known
}

// CacheStats counts what the cache did in one process.
type CacheStats struct {
	Hits, Misses, Puts int
	// Corrupt counts entries found but not used: unreadable, naming
	// another key, failing their checksum, or too large. Each is also a
	// miss.
	Corrupt int
	// Evicted counts entries removed to stay within MaxBytes.
	Evicted int
	// Errors counts writes that failed (the review goes on without them).
	Errors int
}

// CachedAnswer is what the cache holds for one request.
type CachedAnswer struct {
	Content  string // the model's answer, as accepted
	Model    string // the model that answered
	Endpoint string // the host of the base URL it answered on
	Route    string // the route's name when it answered (a name of that configuration)
}

type cacheEntry struct {
	Format   string `json:"format"`
	Key      string `json:"key"`
	Model    string `json:"model"`
	Endpoint string `json:"endpoint"`
	Route    string `json:"route"`
	Content  string `json:"content"`
	Sum      string `json:"sum"`
	Written  string `json:"written"`
}

// CacheKey is the key of req's answer from model in domain: hex SHA-256
// (the keying of eval's recordings; the results cache adds the endpoint:
// ResultsKey).
func CacheKey(domain, model string, req *execution.Request) string {
	return requestKey(CacheFormat, domain, model, nil, req)
}

// ResultsKey is the results cache's key of req's answer from model at
// endpoint (the host of the route's base URL) in domain: hex SHA-256.
func ResultsKey(domain, model, endpoint string, req *execution.Request) string {
	return requestKey(ResultsFormat, domain, model, &endpoint, req)
}

// requestKey hashes the key's fields, each length-prefixed; endpoint is
// left out when nil (CacheKey's rules).
func requestKey(format, domain, model string, endpoint *string, req *execution.Request) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s\n", len(s), s) }
	field(format)
	field(domain)
	field(model)
	if endpoint != nil {
		field(*endpoint)
	}
	for _, m := range req.Messages {
		field(m.Role)
		field(m.Content)
	}
	if req.Schema != nil {
		field(req.Schema.Name)
		field(string(req.Schema.Schema))
		field(fmt.Sprint(req.Schema.Strict))
	} else {
		field("")
	}
	field(fmt.Sprint(req.MaxTokens))
	field(fmt.Sprint(req.Temperature))
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) path(key string) string { return filepath.Join(c.Dir, key[:2], key) }

func (c *Cache) sum(key string, e *cacheEntry) string {
	var mac []byte
	msg := strings.Join([]string{e.Format, key, e.Model, e.Endpoint, e.Route, e.Content}, "\x00")
	if len(c.Secret) > 0 {
		m := hmac.New(sha256.New, c.Secret)
		m.Write([]byte(msg))
		mac = m.Sum(nil)
	} else {
		s := sha256.Sum256([]byte(msg))
		mac = s[:]
	}
	return hex.EncodeToString(mac)
}

// Signed reports whether c signs and verifies its entries with a Secret.
// A privileged run (one that posts with a write token) may use only a
// signed cache: without a Secret an entry's checksum is a plain hash that
// anyone who can write the cache's storage can compute, so a planted entry
// would pass for the model's answer.
func (c *Cache) Signed() bool { return c != nil && len(c.Secret) > 0 }

// Get returns the answer stored under key. A missing, unreadable or
// unverifiable entry is a miss.
func (c *Cache) Get(key string) (CachedAnswer, bool) {
	if c == nil || c.WriteOnly || len(key) != sha256.Size*2 {
		return CachedAnswer{}, false
	}
	e, ok, corrupt := c.read(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if corrupt {
		c.stats.Corrupt++
	}
	if !ok {
		c.stats.Misses++
		return CachedAnswer{}, false
	}
	c.stats.Hits++
	return CachedAnswer{Content: e.Content, Model: e.Model, Endpoint: e.Endpoint, Route: e.Route}, true
}

func (c *Cache) read(key string) (e cacheEntry, ok, corrupt bool) {
	p := c.path(key)
	f, err := os.Open(p)
	if err != nil {
		return e, false, !errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxEntryBytes+1)); err != nil || buf.Len() > maxEntryBytes {
		return e, false, true
	}
	if err := json.Unmarshal(buf.Bytes(), &e); err != nil {
		return e, false, true
	}
	if e.Format != ResultsFormat || e.Key != key || !hmac.Equal([]byte(e.Sum), []byte(c.sum(key, &e))) {
		return e, false, true
	}
	now := time.Now()
	os.Chtimes(p, now, now) // recently used; eviction goes by modification time
	return e, true, false
}

// Put stores a under key. A failure to write is counted, not returned: the
// review's result does not depend on the cache.
func (c *Cache) Put(key string, a CachedAnswer) {
	if c == nil || len(key) != sha256.Size*2 {
		return
	}
	e := cacheEntry{Format: ResultsFormat, Key: key, Model: a.Model, Endpoint: a.Endpoint, Route: a.Route, Content: a.Content, Written: time.Now().UTC().Format(time.RFC3339)}
	e.Sum = c.sum(key, &e)
	b, err := json.Marshal(e)
	if err != nil || len(b) > maxEntryBytes {
		c.count(func(s *CacheStats) { s.Errors++ })
		return
	}
	if err := c.write(key, b); err != nil {
		c.count(func(s *CacheStats) { s.Errors++ })
		return
	}
	c.mu.Lock()
	c.stats.Puts++
	if c.sized {
		c.size += int64(len(b))
	}
	c.mu.Unlock()
	c.evict()
}

func (c *Cache) count(f func(*CacheStats)) {
	c.mu.Lock()
	f(&c.stats)
	c.mu.Unlock()
}

// write stores b atomically: a reader sees the old entry, the new one or
// none, never half of one.
func (c *Cache) write(key string, b []byte) error {
	dir := filepath.Dir(c.path(key))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := cmp.Or(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), c.path(key)); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

type cacheFile struct {
	path string
	size int64
	mod  time.Time
}

// evict removes the least recently used entries while the total is over
// MaxBytes, down to 90% of it.
func (c *Cache) evict() {
	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultCacheMaxBytes
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sized && c.size <= limit {
		return
	}
	var files []cacheFile
	var total int64
	filepath.WalkDir(c.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		files = append(files, cacheFile{p, info.Size(), info.ModTime()})
		total += info.Size()
		return nil
	})
	c.size, c.sized = total, true
	if total <= limit {
		return
	}
	slices.SortFunc(files, func(a, b cacheFile) int { return cmp.Or(a.mod.Compare(b.mod), cmp.Compare(a.path, b.path)) })
	for _, f := range files {
		if c.size <= limit*9/10 {
			break
		}
		if os.Remove(f.path) == nil {
			c.size -= f.size
			c.stats.Evicted++
		}
	}
}

// Stats returns what the cache did so far.
func (c *Cache) Stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// lookup returns, for each engine item, its cached answer (nil for a
// miss), trying the routes' models and endpoints in failover order. An
// answer the current rules no longer accept is a miss too. A hit's Route
// is the current route whose model and endpoint the key holds: the one
// the answer is attributed to, whatever the route was called when it
// answered.
func (c *Cache) lookup(eng *execution.Engine, items []execution.Item) []*CachedAnswer {
	out := make([]*CachedAnswer, len(items))
	if c == nil {
		return out
	}
	for i, it := range items {
		for _, rt := range eng.Routes() {
			a, ok := c.Get(ResultsKey(c.Domain, rt.Model, urlHost(rt.BaseURL), it.Request))
			if !ok {
				continue
			}
			if it.Accept != nil && it.Accept(&execution.Response{Content: a.Content, Model: a.Model}) != nil {
				c.count(func(s *CacheStats) { s.Corrupt++; s.Hits--; s.Misses++ })
				continue
			}
			a.Route, a.Endpoint = rt.Name, urlHost(rt.BaseURL)
			out[i] = &a
			break
		}
	}
	return out
}

// runUncached runs through the engine only the items without a cached
// answer, and returns a result for every item (a cached one is done, on
// the route it was answered on, with no attempt) and the engine run's
// route stats.
func runUncached(ctx context.Context, eng *execution.Engine, items []execution.Item, cached []*CachedAnswer, progress func(done, total int)) ([]execution.Result, []execution.RouteStats) {
	var todo []execution.Item
	var at []int
	for i, it := range items {
		if cached[i] == nil {
			todo = append(todo, it)
			at = append(at, i)
		}
	}
	results := make([]execution.Result, len(items))
	done, stats := eng.RunStats(ctx, todo, progress)
	for k, res := range done {
		results[at[k]] = res
	}
	for i, a := range cached {
		if a != nil {
			results[i] = execution.Result{
				Status:   execution.StatusDone,
				Class:    execution.ClassSuccess,
				Response: &execution.Response{Content: a.Content, Model: a.Model},
				Route:    a.Route,
			}
		}
	}
	return results, stats
}

// store keeps a new accepted answer under the key of the route's model
// that produced it. Cached answers are not stored again.
func (c *Cache) store(eng *execution.Engine, it execution.Item, res execution.Result, hit *CachedAnswer) {
	if c == nil || hit != nil || res.Status != execution.StatusDone || res.Response == nil {
		return
	}
	for _, rt := range eng.Routes() {
		if rt.Name == res.Route {
			host := urlHost(rt.BaseURL)
			c.Put(ResultsKey(c.Domain, rt.Model, host, it.Request),
				CachedAnswer{Content: res.Response.Content, Model: cmp.Or(res.Response.Model, rt.Model), Endpoint: host, Route: rt.Name})
			return
		}
	}
}
