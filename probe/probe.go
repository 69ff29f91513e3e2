// Package probe checks model routes before a review, as the LiteLLM client
// standard asks of health probes: one tiny structured request per route,
// with a real model name and a probe-designated key, a 30 s limit (a probe
// that takes longer IS the alert: "backend slow (>30s)"), at most once an
// hour per route. Each probe runs through execution's engine, so its
// deadline rules and its classifier judge it exactly as they judge a
// review's calls, and the request is review's output contract with nothing
// to review, so a model that answers but ignores the contract is named as
// such.
//
// It owns the probe's verdicts, the hourly guard and its state file, and
// the probe report (text and JSON). The caller builds each route's Provider
// (with the probe key and model) and says where the cache directory is.
//
// It must not import go-openai, execution/openai, report, telemetry or cmd.
package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// Timeout bounds each route's probe, from sending to the whole answer
// (the standard's "probe timeout: 30s").
const Timeout = 30 * time.Second

// MaxTokens is the probe's completion budget: room for the contract's
// empty answer, {"findings":[]}, from any model, even one that thinks
// first; small enough to cost nothing.
const MaxTokens = 200

// Target is one route to probe.
type Target struct {
	// Route is the route as the probe sends on it: its Provider carries the
	// probe key, its Model the probe model. Its Profile, timeouts and
	// streaming are not used: a probe is one non-streaming request of
	// Timeout.
	Route execution.Route
	// KeyEnv names the variable of the key the probe uses, for the
	// diagnosis of a key problem; never the key itself.
	KeyEnv string
}

// Result is what one route's probe found (the JSON contract of
// `warden probe --format json`: {"routes": [...]}).
type Result struct {
	Name    string `json:"name"`
	Model   string `json:"model"`
	BaseURL string `json:"base_url"` // without credentials or query
	// Status is the HTTP status of the answer; 0 when none arrived.
	Status int `json:"status"`
	// Class is execution's class of the outcome: "success", "timeout",
	// "auth", "model_not_found", "connection", "bad_response", ...
	Class string `json:"class"`
	// Contract is "ok" when the answer followed the output contract,
	// "ignored" when the model answered but not in it, "" when no answer
	// came to judge.
	Contract    string `json:"contract"`
	FirstByteMS int64  `json:"first_byte_ms"` // from sending to the first byte of the answer; 0 when none arrived
	TotalMS     int64  `json:"total_ms"`      // from sending to the whole answer or the error
	Healthy     bool   `json:"healthy"`
	Diagnosis   string `json:"diagnosis"`
}

// All probes every target at once and returns the results in the targets'
// order.
func All(ctx context.Context, targets []Target) []Result {
	results := make([]Result, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets { // a handful of routes, each bounded by Timeout
		wg.Go(func() { results[i] = Route(ctx, t) })
	}
	wg.Wait()
	return results
}

// Route probes one route: review's contract request, sent once (no retry,
// no failover) through an execution engine whose only route is the
// target's, with a Timeout deadline.
func Route(ctx context.Context, t Target) Result {
	res := Result{Name: t.Route.Name, Model: t.Route.Model, BaseURL: RedactURL(t.Route.BaseURL)}
	r := t.Route
	// A probe is the standard's own short request: none of the route's
	// review settings apply to it.
	r.Profile, r.RequestTimeout, r.Stream, r.FirstTokenTimeout, r.IdleTimeout = execution.ProfileNone, Timeout, false, 0, 0
	// No breaker: a probe is one call, and on a route with no answer a
	// breaker would have the engine wait for the route and send again (a
	// readmission after an outage, which a probe must not make).
	r.MaxConcurrency, r.MinInterval, r.Breaker = 1, 0, execution.BreakerSettings{Disabled: true}
	p := execution.DefaultPolicy()
	p.RequestTimeout, p.ItemBudget, p.MinAttempt = Timeout, Timeout, time.Second
	p.Reserve, p.Budget = time.Second, Timeout+time.Second
	p.MaxConcurrency, p.MaxRetriesPerRoute = 1, 0
	e, err := execution.New([]execution.Route{r}, p, execution.Options{})
	if err != nil {
		res.Class, res.Diagnosis = execution.ClassBadRequest.String(), "bad configuration: "+err.Error()
		return res
	}
	item := execution.Item{Request: review.ContractRequest(MaxTokens), Accept: review.ContractCheck}
	out := e.Run(ctx, []execution.Item{item}, nil)[0]
	var sent *execution.Attempt
	for i := range out.Attempts {
		if out.Attempts[i].Class != execution.ClassRejected {
			sent = &out.Attempts[i]
		}
	}
	if sent == nil {
		res.Class = out.Class.String()
		if ctx.Err() != nil {
			res.Class = execution.ClassCancelled.String()
		}
		res.Diagnosis = "not sent: " + cmp.Or(out.Reason, res.Class)
		return res
	}
	res.Class, res.TotalMS, res.FirstByteMS = sent.Class.String(), sent.Duration.Milliseconds(), sent.FirstByte.Milliseconds()
	res.Status = status(sent)
	if res.FirstByteMS == 0 && res.Status != 0 {
		// An error answer arrives at once, headers and its short body: the
		// engine records no first byte for it.
		res.FirstByteMS = res.TotalMS
	}
	res.Healthy, res.Diagnosis = judge(sent, t)
	switch {
	case sent.Class == execution.ClassSuccess:
		res.Contract = "ok"
	case errors.Is(sent.Err, review.ErrIgnoresContract):
		res.Contract = "ignored"
	}
	return res
}

// status is the HTTP status an attempt got: the error's, or 200 for an
// answer (good or not) that arrived.
func status(a *execution.Attempt) int {
	var pe *execution.ProviderError
	var bad *execution.BadResponseError
	switch {
	case errors.As(a.Err, &pe):
		return pe.Status
	case a.Class == execution.ClassSuccess, errors.As(a.Err, &bad):
		return 200
	}
	return 0
}

// judge says whether a probe's outcome is healthy, and why not.
func judge(a *execution.Attempt, t Target) (bool, string) {
	var pe *execution.ProviderError
	errors.As(a.Err, &pe)
	st := status(a)
	withStatus := func(s string) string {
		if st != 0 {
			return fmt.Sprintf("%s (HTTP %d)", s, st)
		}
		return s
	}
	switch a.Class {
	case execution.ClassSuccess:
		return true, "ok"
	case execution.ClassBadResponse:
		switch {
		case errors.Is(a.Err, review.ErrIgnoresContract):
			return false, "answers but ignores the output contract"
		case errors.Is(a.Err, execution.ErrEmptyResponse) && st == 200:
			return false, fmt.Sprintf("answers with no content within %d tokens (output contract not met)", MaxTokens)
		}
		return false, withStatus("unusable answer")
	case execution.ClassTimeout:
		if pe != nil { // a 408 the server sent
			return false, withStatus("the server timed out")
		}
		return false, fmt.Sprintf("backend slow (>%s)", Timeout)
	case execution.ClassAuth:
		check := "check the route's API key"
		if t.KeyEnv != "" {
			check = "check " + t.KeyEnv
		}
		return false, withStatus("key problem") + ": " + check
	case execution.ClassPayment:
		return false, withStatus("payment required (out of credits)")
	case execution.ClassModelNotFound:
		return false, withStatus("model not served") + ": " + strconv.Quote(t.Route.Model)
	case execution.ClassConnection:
		return false, "unreachable" + connectionCause(a.Err)
	case execution.ClassRateLimited:
		s := withStatus("rate limited")
		if a.RetryAfter > 0 {
			s += fmt.Sprintf("; Retry-After %s", a.RetryAfter)
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

// RedactURL is a base URL without its credentials, query or fragment,
// which may carry a key.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// Write writes the results as a table (format "text") or as
// {"routes": [...]} (format "json").
func Write(w io.Writer, format string, results []Result) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Routes []Result `json:"routes"`
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
	case len(results) == 1:
		fmt.Fprintf(w, "warden probe: 1 of 1 route unhealthy\n")
	default:
		fmt.Fprintf(w, "warden probe: %d of %d routes unhealthy\n", bad, len(results))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ROUTE\tMODEL\tSTATUS\tFIRST BYTE\tTOTAL\tRESULT")
	for _, r := range results {
		status, first := "-", "-"
		if r.Status != 0 {
			status, first = strconv.Itoa(r.Status), ms(r.FirstByteMS)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", review.OneLine(r.Name), review.OneLine(r.Model), status, first, ms(r.TotalMS), review.OneLine(r.Diagnosis))
	}
	return tw.Flush()
}

// ms is "412ms" or "1.3s".
func ms(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(max(n, 0), 10) + "ms"
	}
	return (time.Duration(n) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// Healthy reports whether every result is healthy.
func Healthy(results []Result) bool {
	for _, r := range results {
		if !r.Healthy {
			return false
		}
	}
	return true
}
