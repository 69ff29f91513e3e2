package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/related"
	"github.com/org/warden/secrets"
	"github.com/org/warden/skills"
)

// MissingKeyError is a route whose key variable is unset.
type MissingKeyError struct{ Route, Env string }

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("route %q: environment variable %s is not set (it holds the route's API key)", e.Route, e.Env)
}

// Setup is what planning a review needs besides the change, as plain
// values: the wiring translates the configuration file, the flags and the
// Action's inputs into it.
type Setup struct {
	Filters hunks.Options // Source is the change's
	// Skills is where the repository's skills are (the working directory,
	// or the base revision's copy in the Action).
	Skills fs.FS
	// SkillNames chooses the skills that run (flags, inputs); empty: those
	// Configured names, else every skill.
	SkillNames []string
	Configured []SkillSetting // [[skills]] of the configuration
	// Routes builds the engine's routes; it runs after the skills are
	// chosen, so a bad skill is reported before a missing key (a
	// *MissingKeyError). needKeys is false when the change has nothing to
	// review: no model will be called, so no route or key is required.
	Routes      func(needKeys bool) ([]execution.Route, error)
	Policy      execution.Policy
	Logger      *slog.Logger
	Thresholds  Thresholds
	MaxTokens   int
	BatchSkills bool
	Change      Change
	// Cache is the results cache (Options.Cache); nil for none.
	Cache *Cache
	// Narrow, when set, narrows the chunks before planning (an
	// incremental review: Since).
	Narrow func(*hunks.Plan) *hunks.Plan
	// Verify and VerifyRoute configure the optional verification pass
	// (Options.Verify); VerifyRoute must name one of the routes.
	Verify      VerifyMode
	VerifyRoute string
	// Context, when set, is the context beyond the hunk (Options.Context);
	// its Source defaults to the change's.
	Context *related.Options
	// LimitsOutOfScope puts what the planning limits drop out of scope
	// (Options.LimitsOutOfScope).
	LimitsOutOfScope bool
	// Instructions are the repository's instructions (instructions.go):
	// read for the paths under review once the change is filtered.
	Instructions InstructionsSetup
	// Secrets finds what no request may carry (Options.Secrets); nil: the
	// rule set alone.
	Secrets *secrets.Scanner
}

// SkillSetting is one [[skills]] entry: a skill's name and, when set, the
// paths and ignore globs that replace its own.
type SkillSetting struct {
	Name          string
	Paths, Ignore []string
}

// Job is a planned review, ready to run.
type Job struct {
	Hunks      *hunks.Plan
	Plan       *Plan
	Engine     *execution.Engine
	Options    Options
	Thresholds Thresholds
	// SkillProblems are the skill files skipped and the warnings about the
	// skills that run, one problem each: not a reason to stop, but worth a
	// warning on the log (the report lists them too).
	SkillProblems skills.Problems
}

// Diff is the change a review plans: Plan filters its files and cuts them
// into chunks under opts (hunks.Prepare's rules), reading them once. A
// parsed change is a hunks.Files; a change read as it streams plans itself
// with hunks.PrepareDiff, naming its input in its errors.
type Diff interface {
	Plan(opts hunks.Options) (*hunks.Plan, error)
}

// Prepare plans the review of a change: filters and chunks, skills, routes,
// engine and work items. source reads the change's files at the reviewed
// revision; their content is used only where it agrees with the diff
// (hunks.Options.VerifySource, hunks.VerifiedSource). The paths in ignored
// are listed as not reviewed.
func Prepare(diff Diff, source func(string) ([]byte, error), ignored []Ignored, s Setup) (*Job, error) {
	filters := s.Filters
	filters.Source, filters.VerifySource = source, source != nil
	hp, err := diff.Plan(filters)
	if errors.Is(err, hunks.ErrBadGlob) {
		return nil, fmt.Errorf("filters.ignore: %w", err)
	}
	if err != nil {
		return nil, err
	}
	if source != nil {
		source = hunks.VerifiedSource(hp.Files, source)
	}
	if s.Narrow != nil {
		hp = s.Narrow(hp)
	}
	chosen, found, err := chooseSkills(s.Skills, s.Configured, s.SkillNames)
	if err != nil {
		return nil, err
	}
	guide, err := NewGuide(s.Instructions, chunkPaths(hp))
	if err != nil {
		return nil, err
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, sk := range chosen {
		log.Info("skill", "skill", sk.Name, "source", sk.Source)
	}
	routes, err := s.Routes(len(hp.Chunks) > 0)
	if err != nil {
		return nil, err
	}
	eng, err := execution.New(routes, s.Policy, execution.Options{Logger: s.Logger})
	if err != nil {
		return nil, err
	}
	if s.VerifyRoute != "" && !slices.ContainsFunc(routes, func(r execution.Route) bool { return r.Name == s.VerifyRoute }) {
		return nil, fmt.Errorf("review.verify_route: no route named %q", s.VerifyRoute)
	}
	if s.Context != nil && s.Context.Source == nil {
		cx := *s.Context
		cx.Source = source
		s.Context = &cx
	}
	opts := Options{
		Verify: s.Verify, VerifyRoute: s.VerifyRoute, Context: s.Context,
		Skills: chosen, Change: s.Change, MaxTokens: s.MaxTokens, BatchSkills: s.BatchSkills,
		FailOn: s.Thresholds.FailOn, ReportOn: s.Thresholds.ReportOn, MaxFindings: s.Thresholds.MaxFindings,
		Cache: s.Cache, Secrets: s.Secrets, Instructions: guide, LimitsOutOfScope: s.LimitsOutOfScope,
	}
	plan, err := NewPlan(hp, eng, opts)
	if err != nil {
		return nil, err
	}
	plan.Ignored = append(plan.Ignored, ignored...)
	plan.Own = append(withheldFindings(hp.Withheld, hp.Ignored, s.Secrets), plan.Own...)
	plan.SkippedSkills, plan.SkillWarnings = skillNotes(found)
	if in := plan.Instructions; in != nil {
		log.Info("instructions", "mode", in.Mode, "from", cmp.Or(in.From, in.NotRead), "sources", len(in.Sources))
		for _, src := range in.Sources {
			log.Info("instructions", "source", src.Source, "for", src.AppliesTo, "chars", src.Chars, "items", src.Items)
		}
	}
	return &Job{Hunks: hp, Plan: plan, Engine: eng, Options: opts, Thresholds: s.Thresholds,
		SkillProblems: skillProblems(plan.SkippedSkills, plan.SkillWarnings)}, nil
}

// chunkPaths are the paths of the planned chunks, each once.
func chunkPaths(hp *hunks.Plan) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range hp.Chunks {
		if !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, c.Path)
		}
	}
	return out
}

// Run runs the job, calling progress after each request.
func (j *Job) Run(ctx context.Context, progress func(done, total int)) *Report {
	opts := j.Options
	opts.Progress = progress
	return Run(ctx, j.Plan, j.Engine, opts)
}

// ChooseSkills resolves which skills run: names, else the configured
// skills' names, else every skill (the repository's review skills in dir
// and the built-ins). A configured skill's paths and ignore globs replace
// the skill's own.
//
// A skill file that discovery skipped (broken, or an agent's skill that is
// not a review skill) stops the review only when it is asked for by name;
// otherwise it is returned in unused with the warnings about the skills
// that run, one problem each, for the log.
func ChooseSkills(dir fs.FS, configured []SkillSetting, names []string) (chosen []*skills.Skill, unused skills.Problems, err error) {
	chosen, found, err := chooseSkills(dir, configured, names)
	if err != nil {
		return nil, nil, err
	}
	return chosen, skillProblems(skillNotes(found)), nil
}
