// Package browsertier is a test-only tier, in a module of its own so that
// its Markdown renderer (goldmark) never enters warden's go.mod: it renders
// the Markdown report of a real review with 40 findings to HTML, as GitHub
// renders a check-run summary or a comment, opens it in headless Chromium
// at 1280×800 and checks that the verdict and the first findings show
// without scrolling. It runs only where Chromium is installed (.ci/run
// installs it when CI=true and sets WARDEN_BROWSER=1, which makes a missing
// browser a failure). Its non-test code imports nothing.
package browsertier
