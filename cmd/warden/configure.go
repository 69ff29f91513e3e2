package main

import (
	"cmp"
	"os"
	"path/filepath"

	"github.com/org/warden/config"
	"github.com/org/warden/review"
)

// The warden.toml format lives in package config; these are its names here.
type (
	fileConfig  = config.File
	routeConfig = config.Route
)

func parseConfig(name string, data []byte) (*fileConfig, error) { return config.Parse(name, data) }

var unwrapPathError = review.UnwrapPathError

// loadConfigFlag reads the configuration a --config flag names (relative to
// the working directory), or else warden.toml at the repository's top level
// (e.root), whatever the working directory; e.configFile says which.
func loadConfigFlag(e *env, flagValue string) (*fileConfig, error) {
	root := cmp.Or(e.root, e.dir)
	cfg, name, err := config.Load(os.DirFS(root), e.abs(flagValue), os.ReadFile)
	if err != nil {
		return nil, &usageError{err}
	}
	if name != "" && !filepath.IsAbs(name) {
		name = filepath.Join(root, name)
	}
	e.configFile = name
	return cfg, nil
}
