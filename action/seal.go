package action

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/org/warden/secrets"
)

// The state key: what seals warden's hidden records on GitHub (the findings
// comment's state, dismissals, acceptances, the review state a push starts
// from; ghreport.Client.SetStateKey). It must be a secret only the
// privileged job holds: input state-secret, else results-cache-secret, else
// a hash of the model keys the trusted configuration sends, which a fork's
// run never has and another workflow of the repository does not use to post
// as github-actions[bot]. Without any of them nothing is sealed, and no
// record changes the gate: dismissals do not count and /warden accept is
// refused, each saying why.

// sealFromInputs sets the state key from the inputs, when they give one;
// it reports whether they did.
func (a *runner) sealFromInputs() bool {
	switch {
	case len(a.in.StateSecret) > 0:
		a.svc.GitHub.SetStateKey(a.in.StateSecret)
	case len(a.in.ResultsCacheSecret) > 0:
		a.svc.GitHub.SetStateKey(a.in.ResultsCacheSecret)
	default:
		return false
	}
	a.sealed = true
	return true
}

// sealFromKeys sets the state key from the trusted configuration's model
// keys, unless it is set already.
func (a *runner) sealFromKeys(keys []secrets.Value) {
	if a.sealed {
		return
	}
	a.sealed = true
	if k := derivedCacheSecret(keys); k != nil {
		sum := sha256.Sum256(append([]byte("warden state key\x00"), k...))
		a.svc.GitHub.SetStateKey(sum[:])
		return
	}
	a.gha.Warningf("warden: nothing seals warden's records on this run (no state-secret, no results-cache-secret, and the trusted configuration's routes send no model key): dismissals and acceptances are not believed and /warden accept is refused; set state-secret to a repository secret")
}

// sealFor sets the state key for a command on pull request number: from
// the inputs, else from the model keys of the configuration its base
// revision trusts.
func (a *runner) sealFor(ctx context.Context, number int) error {
	if a.sealed || a.sealFromInputs() {
		return nil
	}
	p, err := a.svc.GitHub.PullRequest(ctx, number)
	if err != nil {
		return fmt.Errorf("pull request #%d: %w", number, err)
	}
	tc, err := a.trust(ctx, fromGitHub(a.svc.Owner, a.svc.Repo, p))
	if err != nil {
		return err
	}
	defer tc.close()
	a.sealFromKeys(tc.cfg.Secrets)
	return nil
}
