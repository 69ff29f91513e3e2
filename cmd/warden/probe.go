package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
)

// probeTimeout bounds each route's probe, from sending to the whole answer.
const probeTimeout = 30 * time.Second

// probeMaxTokens is the probe's completion budget: enough for "ok" from any
// model, small enough to cost nothing.
const probeMaxTokens = 16

// exitUnhealthy is probe's exit code when a route is not healthy
// (DESIGN.md §5: "exits 1 if one is unhealthy").
const exitUnhealthy = 1

// probePrompt is the probe's only message.
const probePrompt = "Reply with the single word: ok"

// probeOptions are the flags of `warden probe`.
type probeOptions struct {
	config string
	format string // text or json
}

func parseProbeFlags(args []string, stderr io.Writer) (*probeOptions, error) {
	o := &probeOptions{}
	fs := flag.NewFlagSet("warden probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.config, "config", "", "configuration `FILE` (default: warden.toml when present)")
	fs.StringVar(&o.format, "format", "text", "output format: text or json")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usagef("probe: unexpected argument %q", fs.Arg(0))
	}
	if o.format != "text" && o.format != "json" {
		return nil, usagef("probe: unknown format %q (want text or json)", o.format)
	}
	return o, nil
}

// probeTarget is one configured route, ready to probe.
type probeTarget struct {
	name, baseURL, model string
	keyEnv               string // the key's variable, for the diagnosis
	key                  execution.Secret
}

// probeResult is what one route's probe found (the JSON contract of
// `warden probe --format json`: {"routes": [...]}).
type probeResult struct {
	Name    string `json:"name"`
	Model   string `json:"model"`
	BaseURL string `json:"base_url"` // without credentials or query
	// Status is the HTTP status of the answer; 0 when none arrived.
	Status int `json:"status"`
	// Class is execution's class of the outcome: "success", "timeout",
	// "auth", "model_not_found", "connection", ...
	Class       string `json:"class"`
	FirstByteMS int64  `json:"first_byte_ms"` // from sending to the response headers; 0 when none arrived
	TotalMS     int64  `json:"total_ms"`      // from sending to the whole answer or the error
	Healthy     bool   `json:"healthy"`
	Diagnosis   string `json:"diagnosis"`
}

// runProbe is `warden probe`: one tiny real request on every configured
// route, with the route's model and key. It exits 0 when every route is
// healthy, 1 when one is not, 2 on bad configuration (a missing key names
// its variable; nothing is sent).
func runProbe(ctx context.Context, e *env, args []string) (int, error) {
	o, err := parseProbeFlags(args, e.stderr)
	if err != nil {
		return exitUsage, err
	}
	cfg, err := loadConfigFlag(e, o.config)
	if err != nil {
		return exitUsage, err
	}
	confs, err := routeConfigs(cfg, e.getenv, true)
	if err != nil {
		return exitUsage, err
	}
	targets := make([]probeTarget, len(confs))
	for i, rc := range confs {
		key, err := routeKey(rc, e.getenv, true)
		if err != nil {
			return exitUsage, err
		}
		targets[i] = probeTarget{name: rc.Name, baseURL: rc.BaseURL, model: rc.Model, keyEnv: rc.APIKeyEnv, key: key}
	}
	results := probeAll(ctx, targets, nil)
	if ctx.Err() != nil {
		return exitInterrupted, errInterrupted
	}
	if err := writeProbe(e.stdout, o.format, results); err != nil {
		return exitUsage, err
	}
	for _, r := range results {
		if !r.Healthy {
			return exitUnhealthy, nil
		}
	}
	return exitOK, nil
}

// probeAll probes every target at once and returns the results in the
// targets' order. hc sends the requests; nil means a fresh client on
// http.DefaultTransport's settings.
func probeAll(ctx context.Context, targets []probeTarget, hc *http.Client) []probeResult {
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	results := make([]probeResult, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets { // a handful of routes, each bounded by probeTimeout
		wg.Go(func() { results[i] = probeRoute(ctx, t, hc) })
	}
	wg.Wait()
	return results
}

// probeRoute sends one chat completion of probeMaxTokens tokens to the
// route through hc, with a User-Agent of warden/<version> (probe), and
// judges the route by the outcome within probeTimeout.
func probeRoute(ctx context.Context, t probeTarget, hc *http.Client) probeResult {
	res := probeResult{Name: t.name, Model: t.model, BaseURL: redactURL(t.baseURL)}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	rec := &probeRecorder{base: base}
	client := *hc
	client.Transport = rec
	p, err := openai.New(openai.Config{
		BaseURL:    t.baseURL,
		APIKey:     t.key,
		HTTPClient: &client,
		Headers:    map[string]string{"User-Agent": "warden/" + version + " (probe)"},
	})
	if err != nil {
		res.Class, res.Diagnosis = execution.ClassBadRequest.String(), "bad configuration: "+err.Error()
		return res
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	start := time.Now()
	resp, err := p.Complete(pctx, &execution.Request{
		Model:     t.model,
		Messages:  []execution.Message{{Role: "user", Content: probePrompt}},
		MaxTokens: probeMaxTokens,
	})
	res.TotalMS = time.Since(start).Milliseconds()
	res.Status, res.FirstByteMS = rec.result()
	class := execution.Classify(ctx, err)
	if class == execution.ClassUnknown && pctx.Err() != nil && ctx.Err() == nil {
		class = execution.ClassTimeout
	}
	res.Class = class.String()
	res.Healthy, res.Diagnosis = judge(class, err, resp, res.Status, t)
	return res
}

// judge says whether a probe's outcome is healthy, and why not.
func judge(class execution.Class, err error, resp *execution.Response, status int, t probeTarget) (bool, string) {
	var pe *execution.ProviderError
	errors.As(err, &pe)
	withStatus := func(s string) string {
		if status != 0 {
			return fmt.Sprintf("%s (HTTP %d)", s, status)
		}
		return s
	}
	switch class {
	case execution.ClassSuccess:
		return true, "ok"
	case execution.ClassBadResponse:
		if errors.Is(err, execution.ErrEmptyResponse) && resp != nil && status >= 200 && status < 300 {
			// A reasoning model may spend the probe's few tokens thinking:
			// the route answered, which is what a probe asks.
			return true, fmt.Sprintf("ok (answered with no content within %d tokens)", probeMaxTokens)
		}
		return false, withStatus("unusable answer")
	case execution.ClassTimeout:
		if pe != nil { // a 408 the server sent
			return false, withStatus("the server timed out")
		}
		return false, fmt.Sprintf("backend slow (>%d s)", int(probeTimeout.Seconds()))
	case execution.ClassAuth:
		check := "check the route's API key"
		if t.keyEnv != "" {
			check = "check " + t.keyEnv
		}
		return false, withStatus("key problem") + ": " + check
	case execution.ClassPayment:
		return false, withStatus("payment required (out of credits)")
	case execution.ClassModelNotFound:
		return false, withStatus("model not served") + ": " + strconv.Quote(t.model)
	case execution.ClassConnection:
		return false, "unreachable" + connectionCause(err)
	case execution.ClassRateLimited:
		s := withStatus("rate limited")
		if pe != nil && pe.RetryAfter > 0 {
			s += fmt.Sprintf("; Retry-After %s", pe.RetryAfter)
		}
		return false, s
	case execution.ClassOverloaded:
		return false, withStatus("overloaded")
	case execution.ClassServerError:
		return false, withStatus("server error")
	case execution.ClassBadRequest:
		return false, withStatus("request rejected")
	case execution.ClassCancelled:
		return false, "interrupted"
	}
	return false, withStatus("failed")
}

// connectionCause is " (connection refused)", " (no such host)" or "".
func connectionCause(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return " (connection refused)"
	case errors.As(err, &dns):
		return " (no such host)"
	case errors.Is(err, syscall.ECONNRESET):
		return " (connection reset)"
	}
	return ""
}

// redactURL is a base URL without its credentials, query or fragment,
// which may carry a key.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// probeRecorder is the transport under the provider's: it records the
// response's status and when its headers arrived.
type probeRecorder struct {
	base http.RoundTripper

	mu        sync.Mutex
	status    int
	firstByte time.Duration
}

func (r *probeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.status, r.firstByte = resp.StatusCode, time.Since(start)
		r.mu.Unlock()
	}
	return resp, err
}

func (r *probeRecorder) result() (status int, firstByteMS int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.firstByte.Milliseconds()
}

// writeProbe writes the results as a table or as {"routes": [...]}.
func writeProbe(w io.Writer, format string, results []probeResult) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Routes []probeResult `json:"routes"`
		}{results})
	}
	bad := 0
	for _, r := range results {
		if !r.Healthy {
			bad++
		}
	}
	switch {
	case bad == 0 && len(results) == 1:
		fmt.Fprintln(w, "warden probe: the route is healthy")
	case bad == 0:
		fmt.Fprintf(w, "warden probe: all %d routes are healthy\n", len(results))
	default:
		fmt.Fprintf(w, "warden probe: %d of %d %s unhealthy\n", bad, len(results), pickWord(len(results), "route", "routes"))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ROUTE\tMODEL\tSTATUS\tFIRST BYTE\tTOTAL\tRESULT")
	for _, r := range results {
		status, first := "-", "-"
		if r.Status != 0 {
			status = strconv.Itoa(r.Status)
		}
		if r.Status != 0 {
			first = probeMS(r.FirstByteMS)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", oneLine(r.Name), oneLine(r.Model), status, first,
			probeMS(r.TotalMS), oneLine(r.Diagnosis))
	}
	return tw.Flush()
}

// probeMS is "412ms" or "1.3s".
func probeMS(ms int64) string {
	if ms < 1000 {
		return strconv.FormatInt(max(ms, 0), 10) + "ms"
	}
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}

func pickWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
