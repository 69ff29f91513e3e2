package config

import (
	"cmp"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
	"github.com/org/warden/secrets"
)

// File is a decoded warden.toml (DESIGN.md §6); zero values mean "not set".
type File = fileConfig

// Route is one [[routes]] table.
type Route = routeConfig

// Parse decodes warden.toml strictly; name is the file's name in errors.
func Parse(name string, data []byte) (*File, error) { return parseConfig(name, data) }

// Load reads the configuration file: the named one (which must exist, read
// with readFile), or warden.toml in fsys when it exists, or none (a zero
// File and name ""). It returns the name it read.
func Load(fsys fs.FS, named string, readFile func(string) ([]byte, error)) (*File, string, error) {
	return loadConfig(fsys, named, readFile)
}

// EnvRoute is the single route of the environment's quick variables
// (WARDEN_BASE_URL and WARDEN_MODEL, or OPENAI_API_KEY / OPENROUTER_API_KEY);
// ok is false when they name none.
func EnvRoute(getenv func(string) string) (r Route, ok bool, err error) { return envRoute(getenv) }

// Policy is the engine's policy: execution's defaults under the file's keys.
func (c *fileConfig) Policy() execution.Policy { return c.policy() }

// Thresholds are the file's fail_on, report_on and max_findings, as a layer
// for review.ResolveThresholds.
func (c *fileConfig) Thresholds() review.ThresholdSettings { return c.thresholds() }

// Setup is the file's part of a review's setup: the filters, the
// configured skills, the engine's policy, the answer cap and skill
// batching. The caller adds the change, the skills' file system, the
// routes, the logger and the resolved thresholds.
func (c *fileConfig) Setup() review.Setup {
	configured := make([]review.SkillSetting, len(c.Skills))
	for i, sk := range c.Skills {
		configured[i] = review.SkillSetting{Name: sk.Name, Paths: sk.Paths, Ignore: sk.Ignore}
	}
	return review.Setup{
		Filters: hunks.Options{Ignore: c.Filters.Ignore, MaxFiles: c.Filters.MaxFiles,
			MaxChangedLines: c.Filters.MaxChangedLines, MaxFileBytes: c.Filters.MaxFileBytes},
		Configured: configured, Policy: c.policy(),
		MaxTokens: c.Review.MaxTokens, BatchSkills: c.Review.BatchSkills,
		Verify: c.verifyMode(), VerifyRoute: c.Review.VerifyRoute,
		LimitsOutOfScope: c.Filters.LimitsOutOfScope,
		Instructions:     c.instructionsSetup(),
	}
}

// Secrets are the values of every model key the configuration may send,
// named by their variables: the default key variables' (execution.KeyEnvs),
// each route's api_key_env's, then each route's probe_api_key_env's. They
// are masked in the log and never sent in a request (secrets.Scanner).
// Unset ones are included, empty.
func (c *fileConfig) Secrets(getenv func(string) string) []secrets.Value {
	var held []secrets.Value
	for _, k := range execution.KeyEnvs {
		held = append(held, secrets.Held(k, getenv(k)))
	}
	for _, r := range c.Routes {
		if r.APIKeyEnv != "" {
			held = append(held, secrets.Held(r.APIKeyEnv, getenv(r.APIKeyEnv)))
		}
	}
	for _, r := range c.Routes {
		if r.ProbeAPIKeyEnv != "" {
			held = append(held, secrets.Held(r.ProbeAPIKeyEnv, getenv(r.ProbeAPIKeyEnv)))
		}
	}
	return held
}

// SetBudget overrides review.budget (the Action's budget input).
func (c *fileConfig) SetBudget(d time.Duration) { c.Review.Budget = duration(d) }

// ThresholdsError names the file's review.report_on when err (resolving the
// file's thresholds under a caller's fail-on) may come from it; else err.
func (c *fileConfig) ThresholdsError(err error) error {
	if !c.Review.ReportOn.set {
		return err
	}
	return &configError{file: c.file, line: c.reportOnLine, key: "review.report_on", msg: err.Error() + " with the fail-on given"}
}

// ReviewSettings are what the caller (flags, or the Action's inputs) adds
// to the file for one review.
type ReviewSettings struct {
	Thresholds review.ThresholdSettings // over review.fail_on, report_on, max_findings
	SkillNames []string                 // overrides [[skills]] when non-empty
	Skills     fs.FS                    // where the repository's skills are; nil: Root
	Root       string                   // the repository's top level, where context files are read
	Change     review.Change
	DryRun     bool // no key needed: no model is called
	Logger     *slog.Logger
	Cache      *review.Cache                 // the results cache; nil: none
	Narrow     func(*hunks.Plan) *hunks.Plan // an incremental review's narrowing; nil: the whole change
	Getenv     func(string) string
	Version    string // the tool's, for the routes' User-Agent
	// Untrusted says the change's author is not trusted: the exclusions by
	// convention do not apply (hunks.Options.Untrusted).
	Untrusted bool
	// Instructions is the trusted revision's tree the repository's
	// instructions are read from (the pull request's base in the Action,
	// HEAD or the merge base locally; never the change itself), named by
	// InstructionsFrom; nil when there is none, and InstructionsNotRead
	// says why.
	Instructions        fs.FS
	InstructionsFrom    string
	InstructionsNotRead string
	// Held are the keys and tokens warden holds besides the file's route
	// keys (a GitHub token, a collector's token): no request carries them.
	Held []secrets.Value
}

// PrepareReview turns the file, the settings and the change into a planned
// review (review.Prepare). A job may come with an error; every error is the
// user's input and names it.
func (c *fileConfig) PrepareReview(diff review.Diff, source func(string) ([]byte, error), ignored []review.Ignored, s ReviewSettings) (*review.Job, error) {
	th, err := review.ResolveThresholds(c.Thresholds(), s.Thresholds)
	if err != nil { // the file's report_on against a flag's or input's fail-on, or the flag's own
		return nil, c.ThresholdsError(err)
	}
	setup := c.Setup() // the file's filters, skills, policy and caps
	setup.Skills = cmp.Or[fs.FS](s.Skills, os.DirFS(s.Root))
	setup.SkillNames, setup.Change, setup.Logger, setup.Thresholds = s.SkillNames, s.Change, s.Logger, th
	setup.Cache, setup.Narrow = s.Cache, s.Narrow
	setup.Filters.Untrusted = s.Untrusted
	setup.Instructions.Repo, setup.Instructions.From, setup.Instructions.NotRead = s.Instructions, s.InstructionsFrom, s.InstructionsNotRead
	setup.Secrets = secrets.NewScanner(append(c.Secrets(s.Getenv), s.Held...)...)
	setup.Context = c.ContextOptions(os.DirFS(s.Root))
	setup.Routes = func(needKeys bool) ([]execution.Route, error) {
		return c.EngineRoutes(s.Getenv, needKeys && !s.DryRun, s.Version)
	}
	return review.Prepare(diff, source, ignored, setup)
}
