// Package actiontest tests the GitHub Action's packaging, which is not Go:
// action.yml (every input reaches `warden action` under its INPUT_ name,
// every output is mapped, third-party actions are pinned by SHA),
// scripts/install.sh (shellcheck-clean; the verified download, cache and
// build-from-source paths run for real against loopback servers), the
// release configuration (.goreleaser.yaml names what install.sh downloads)
// and the workflows.
//
// It holds no code: only tests, which run the repository's files. It must
// not import any package of this module.
package actiontest
