package action

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/org/warden/internal/gitrepo"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
	"github.com/org/warden/secrets"
)

// Env is the runner's process as the Action sees it: the variables
// action.yml and GitHub set (INPUT_*, GITHUB_*, RUNNER_TEMP), a way to hide
// a value in the log, and a way to read the event file.
type Env struct {
	Getenv   func(string) string
	Mask     func(secret string) // ::add-mask:: for a secret the log must not show
	ReadFile func(name string) ([]byte, error)
}

// Inputs reads the Action's inputs: action.yml passes each as an INPUT_*
// variable named by the upper snake case of its kebab-case name (fail-on
// → INPUT_FAIL_ON). The results cache's directory comes from action.yml
// (input results-cache), WARDEN_RESULTS_CACHE_DIR, not from an input of
// its own.
func (env Env) Inputs() (Inputs, error) {
	in, err := ParseInputs(func(name string) string {
		return env.Getenv("INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	})
	if err != nil {
		return in, err
	}
	in.ResultsCacheDir = strings.TrimSpace(env.Getenv("WARDEN_RESULTS_CACHE_DIR"))
	return in, nil
}

// Connect masks the token and the results cache's secret in the log (the
// trusted configuration's keys derive one when none is given), checks the
// inputs and variables a GitHub client needs, and returns the services that
// talk to GitHub, with the workspace (GITHUB_WORKSPACE, else dir) and the
// event. Every error names the input or variable.
func (env Env) Connect(in *Inputs, dir string) (Services, Event, error) {
	token := strings.TrimSpace(env.Getenv("INPUT_GITHUB_TOKEN"))
	if token != "" {
		env.Mask(token)
	}
	if len(in.ResultsCacheSecret) > 0 {
		env.Mask(string(in.ResultsCacheSecret))
	}
	if len(in.StateSecret) > 0 {
		env.Mask(string(in.StateSecret))
	}
	if _, err := ghreport.ParseIncompleteConclusion(in.IncompleteConclusion); err != nil {
		return Services{}, Event{}, fmt.Errorf("input %v", err)
	}
	owner, repo, ok := strings.Cut(env.Getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return Services{}, Event{}, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name: 'warden action' runs inside GitHub Actions", env.Getenv("GITHUB_REPOSITORY"))
	}
	if token == "" {
		return Services{}, Event{}, fmt.Errorf("input github-token is empty: pass ${{ github.token }} or a token with checks: write and pull-requests: write")
	}
	// Every content-creating request goes through one write budget:
	// GitHub's secondary limits (80 a minute, 500 an hour).
	client, err := ghreport.New(ghreport.Config{APIURL: cmp.Or(env.Getenv("GITHUB_API_URL"), "https://api.github.com"),
		ServerURL: env.Getenv("GITHUB_SERVER_URL"), Token: token, Login: in.TokenLogin, Owner: owner, Repo: repo,
		HTTPClient: &http.Client{Transport: ghreport.NewWriteBudget().RoundTripper(nil)}})
	if err != nil {
		return Services{}, Event{}, fmt.Errorf("GITHUB_API_URL: %v", err)
	}
	ev := Event{Name: env.Getenv("GITHUB_EVENT_NAME"), Path: env.Getenv("GITHUB_EVENT_PATH")}
	if ev.Path != "" {
		ev.Data, ev.Err = env.ReadFile(ev.Path)
		ev.Err = review.UnwrapPathError(ev.Err)
	}
	svc := Services{
		GitHub: client, Workspace: cmp.Or(env.Getenv("GITHUB_WORKSPACE"), dir), RunnerTemp: env.Getenv("RUNNER_TEMP"),
		Owner: owner, Repo: repo, ReadFile: env.ReadFile,
		Git: gitrepo.NewRemote("origin", strings.TrimSuffix(cmp.Or(env.Getenv("GITHUB_SERVER_URL"), "https://github.com"), "/")+"/", token),
	}
	return svc, ev, nil
}

// derivedCacheSecret signs the results cache when no results-cache-secret
// is given: a hash of the model keys the configuration may send (its
// routes' api_key_env and the default key variables), which a fork's run
// never has (GitHub passes it no secrets), so that it cannot write an entry
// the privileged run accepts. Each distinct key counts once, in order; one
// key gives the hash earlier versions derived from it. Nil without a key.
// The hash is never printed.
func derivedCacheSecret(keys []secrets.Value) []byte {
	var distinct []string
	for _, v := range keys {
		if k := strings.TrimSpace(v.Reveal()); k != "" && !slices.Contains(distinct, k) {
			distinct = append(distinct, k)
		}
	}
	if len(distinct) == 0 {
		return nil
	}
	sum := sha256.Sum256([]byte("warden results cache secret\x00" + strings.Join(distinct, "\x00")))
	return sum[:]
}
