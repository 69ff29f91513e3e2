// Package github owns warden's conversation with GitHub's REST API: it
// creates and completes the check run, posts one pull-request review with
// inline comments and suggestions, reads the pull request and its files, and
// writes workflow-command annotations when the token cannot write. It is the
// only package besides cmd/warden that imports go-github.
//
// Everything that decides what GitHub is told lives here too: Conclusion and
// Title map a *review.Report to the check run's conclusion and title
// (Passes says which conclusions pass a required check; AcceptedOutput is
// a maintainer's /warden accept), anchors are checked against the
// reviewed diff before a comment is sent, and warden's hidden markers are
// read only from comments by the token's own login (Identity).
//
// Failure handling is owned by the Client: secondary rate limits are waited
// out when the wait fits the caller's deadline, a 5xx answer gets exactly one
// retry, writes are serialized, and a 403 that is not a rate limit becomes
// ErrNoWriteAccess so that callers can fall back to WriteAnnotations. The
// token never appears in an error, a log line or anything recorded.
//
// The package depends on review's vocabulary, report (for Fingerprint),
// secrets (masking the token: secrets.Mask), go-github and go-githubactions. It must not import execution, hunks,
// skills, cmd/warden or go-openai; it never reads the environment.
package github
