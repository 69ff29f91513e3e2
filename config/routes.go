package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/review"
)

// EngineRoutes turns the configured routes (or the environment's quick
// route) into engine routes on the OpenAI-compatible provider, which sends
// User-Agent warden/version (a probe key's provider, for the breaker's
// probes, "warden/version (probe)"). needKeys is false for a dry run: then
// a missing key or a missing route is not an error, because no model is
// called. An unset key variable is a *review.MissingKeyError naming it.
func (c *fileConfig) EngineRoutes(getenv func(string) string, needKeys bool, version string) ([]execution.Route, error) {
	confs, err := c.RouteConfigs(getenv, needKeys)
	if err != nil {
		return nil, err
	}
	if len(confs) == 0 {
		return []execution.Route{{Name: "none", Provider: noProvider{}}}, nil
	}
	routes := make([]execution.Route, len(confs))
	for i, rc := range confs {
		key, err := rc.Key(getenv, needKeys)
		if err != nil {
			return nil, err
		}
		p, err := openai.New(openai.Config{BaseURL: rc.BaseURL, APIKey: key, UserAgent: "warden/" + version})
		if err != nil {
			return nil, fmt.Errorf("route %q: %v", rc.Name, err)
		}
		routes[i] = rc.EngineRoute()
		routes[i].Provider = p
		if pk := getenv(rc.ProbeAPIKeyEnv); rc.ProbeAPIKeyEnv != "" && pk != "" { // the breaker's probes identify themselves
			if pp, err := openai.New(openai.Config{BaseURL: rc.BaseURL, APIKey: execution.Secret(pk), UserAgent: "warden/" + version + " (probe)"}); err == nil {
				routes[i].ProbeProvider = pp
			}
		}
	}
	return routes, nil
}

// RoutesOver returns the builder of the configured routes for `warden
// eval --faults`, which plays a fault schedule in memory behind each
// route: the first len(transports) routes, as EngineRoutes builds them but
// with no key, on the same OpenAI-compatible client sending through
// transports[i] instead of the network.
func (c *fileConfig) RoutesOver(getenv func(string) string, version string) func(transports []http.RoundTripper) ([]execution.Route, error) {
	return func(transports []http.RoundTripper) ([]execution.Route, error) {
		return c.routesOver(getenv, transports, version)
	}
}

func (c *fileConfig) routesOver(getenv func(string) string, transports []http.RoundTripper, version string) ([]execution.Route, error) {
	confs, err := c.RouteConfigs(getenv, false)
	if err != nil {
		return nil, err
	}
	if len(confs) < len(transports) {
		return nil, fmt.Errorf("%d routes configured, %d wanted", len(confs), len(transports))
	}
	routes := make([]execution.Route, len(transports))
	for i, rc := range confs[:len(transports)] {
		p, err := openai.New(openai.Config{BaseURL: rc.BaseURL, UserAgent: "warden/" + version, HTTPClient: &http.Client{Transport: transports[i]}})
		if err != nil {
			return nil, fmt.Errorf("route %q: %v", rc.Name, err)
		}
		routes[i] = rc.EngineRoute()
		routes[i].Provider = p
	}
	return routes, nil
}

// ScenarioReader reads a scenario file's warden.toml part
// (scenario.File.ConfigTOML) as warden.toml, for `warden eval --faults`:
// the engine's policy and the builder of its routes (RoutesOver).
func ScenarioReader(getenv func(string) string, version string) func(name string, doc []byte) (execution.Policy, func([]http.RoundTripper) ([]execution.Route, error), error) {
	return func(name string, doc []byte) (execution.Policy, func([]http.RoundTripper) ([]execution.Route, error), error) {
		c, err := parseConfig(name, doc)
		if err != nil {
			return execution.Policy{}, nil, err
		}
		return c.Policy(), c.RoutesOver(getenv, version), nil
	}
}

// RouteConfigs returns the routes to call: warden.toml's [[routes]], else
// the environment's quick route. needKeys is false for a dry run: then no
// route at all is not an error (nil, nil), because no model is called.
func (c *fileConfig) RouteConfigs(getenv func(string) string, needKeys bool) ([]Route, error) {
	if len(c.Routes) > 0 {
		return c.Routes, nil
	}
	r, ok, err := envRoute(getenv)
	switch {
	case err != nil && needKeys:
		return nil, err
	case ok && err == nil:
		return []Route{r}, nil
	case needKeys:
		return nil, errors.New("no model route: add [[routes]] to warden.toml, or set WARDEN_BASE_URL, WARDEN_MODEL and WARDEN_API_KEY (or OPENAI_API_KEY or OPENROUTER_API_KEY)")
	}
	return nil, nil
}

// Key reads a route's key from its variable; with needKeys, an unset
// variable is a *review.MissingKeyError naming it.
func (rc routeConfig) Key(getenv func(string) string, needKeys bool) (execution.Secret, error) {
	if rc.APIKeyEnv == "" {
		return "", nil
	}
	key := execution.Secret(getenv(rc.APIKeyEnv))
	if key == "" && needKeys {
		return "", &review.MissingKeyError{Route: rc.Name, Env: rc.APIKeyEnv}
	}
	return key, nil
}

// ProbeRoute is the route `warden probe` sends on: the route's
// probe_api_key_env and probe_model when it names them, else its own, on a
// provider sending User-Agent "warden/version (probe)". keyEnv is the
// variable the key came from.
func (rc routeConfig) ProbeRoute(getenv func(string) string, version string) (r execution.Route, keyEnv string, err error) {
	kc := rc
	if rc.ProbeAPIKeyEnv != "" {
		kc.APIKeyEnv = rc.ProbeAPIKeyEnv
	}
	key, err := kc.Key(getenv, true)
	if err != nil {
		return execution.Route{}, "", err
	}
	p, err := openai.New(openai.Config{BaseURL: rc.BaseURL, APIKey: key, UserAgent: "warden/" + version + " (probe)"})
	if err != nil {
		return execution.Route{}, "", fmt.Errorf("route %q: %v", rc.Name, err)
	}
	noSchema := rc.JSONSchema != nil && !*rc.JSONSchema
	r = execution.Route{Name: rc.Name, BaseURL: rc.BaseURL, Model: cmp.Or(rc.ProbeModel, rc.Model), Provider: p, NoSchema: noSchema, ResponseHealing: rc.ResponseHealing}
	return r, kc.APIKeyEnv, nil
}

// noProvider stands in for a route in a dry run without one; it is never
// called, and says so if it is.
type noProvider struct{}

func (noProvider) Complete(context.Context, *execution.Request) (*execution.Response, error) {
	return nil, errors.New("no model route configured")
}
