package config

import (
	"testing"
	"time"
)

// TestSetup reads the full example into the file's part of a review's
// setup.
func TestSetup(t *testing.T) {
	t.Parallel()
	c, err := Parse("warden.toml", []byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Setup()
	if len(s.Filters.Ignore) != 1 || s.Filters.Ignore[0] != "docs/**" {
		t.Errorf("Setup().Filters = %+v", s.Filters)
	}
	if len(s.Configured) != 1 || s.Configured[0].Name != "security-review" || s.Configured[0].Paths[0] != "**/*.go" || s.Configured[0].Ignore[0] != "**/*_test.go" {
		t.Errorf("Setup().Configured = %+v", s.Configured)
	}
	if s.Policy.Budget != 10*time.Minute || s.Policy.MaxConcurrency != 4 {
		t.Errorf("Setup().Policy = %+v", s.Policy)
	}
	c.SetBudget(20 * time.Minute)
	if got := c.Policy().Budget; got != 20*time.Minute {
		t.Errorf("after SetBudget(20m), Policy().Budget = %s", got)
	}
}
