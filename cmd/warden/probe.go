package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/org/warden/cli"
	"github.com/org/warden/probe"
)

// exitUnhealthy is probe's exit code when a route is not healthy
// (DESIGN.md §5: "exits 1 if one is unhealthy").
const exitUnhealthy = 1

// runProbe is `warden probe` (package probe does the work): one tiny
// structured request on every configured route, with the route's
// probe_api_key_env and probe_model (its own key and model, with a
// warning, when unset), at most once an hour per route unless --force. It
// exits 0 when every route is healthy, 1 when one is not, 2 on bad
// configuration or a refused probe (nothing is sent).
func runProbe(ctx context.Context, e *env, o *cli.Probe) (int, error) {
	cfg, err := loadConfigFlag(e, o.Config)
	if err != nil {
		return exitUsage, err
	}
	confs, err := cfg.RouteConfigs(e.getenv, true)
	if err != nil {
		return exitUsage, &usageError{err}
	}
	targets := make([]probe.Target, len(confs))
	for i, rc := range confs {
		if targets[i], err = probeTarget(e, rc); err != nil {
			return exitUsage, err
		}
	}
	warn := func(msg string) { fmt.Fprintf(e.stderr, "warden probe: warning: %s\n", msg) }
	if err := probe.Admit(e.getenv, targets, o.Force, warn); err != nil {
		return exitUsage, err
	}
	results := probe.All(ctx, targets)
	if ctx.Err() != nil {
		return exitInterrupted, errInterrupted
	}
	if err := probe.Write(e.stdout, o.Format, results); err != nil {
		return exitUsage, err
	}
	if !probe.Healthy(results) {
		return exitUnhealthy, nil
	}
	return exitOK, nil
}

// probeTarget builds the route a probe sends on (config's ProbeRoute): the
// probe key and model when the route names them, else its own, with a
// warning.
func probeTarget(e *env, rc routeConfig) (probe.Target, error) {
	var own []string
	if rc.ProbeAPIKeyEnv == "" && rc.APIKeyEnv != "" {
		own = append(own, fmt.Sprintf("no probe_api_key_env: probing with its own key (%s)", rc.APIKeyEnv))
	}
	if rc.ProbeModel == "" {
		own = append(own, fmt.Sprintf("no probe_model: probing its review model (%s)", oneLine(rc.Model)))
	}
	if len(own) > 0 {
		fmt.Fprintf(e.stderr, "warden probe: warning: route %q has %s\n", rc.Name, strings.Join(own, "; "))
	}
	r, keyEnv, err := rc.ProbeRoute(e.getenv, wardenBuild().Version)
	if err != nil {
		return probe.Target{}, &usageError{err}
	}
	return probe.Target{Route: r, KeyEnv: keyEnv}, nil
}
