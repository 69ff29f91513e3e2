#!/usr/bin/env bash
# check-eval-corpus.sh: checks warden eval's corpus of public changes
# (eval/corpus/public.toml) against the referenced repositories. Run it after
# adding or changing a case; CI does not (it reaches the repositories).
#
#   TestPublicCorpusFile     the file alone: counts, licences, categories, one-line descriptions
#   TestPublicCorpus         every case fetched and materialised with git, recorded against the
#                            scripted test reviewer and replayed twice with the same scores
#   TestEvalPublicCorpus     the same through the command line: warden eval --record, then
#                            --replay twice
#   TestPublicCorpusHistory  every case against its repository's whole history: the parent is
#                            the first parent, each fix comes later and rewrites the labelled lines
#                            (git blame in the fix's parent), the labels are added lines, a clean
#                            case's lines still stand at the default branch, the licence file says
#                            the named licence, and no description shares five words in a row with
#                            the commits' messages or diffs
#
# git reaches the repositories with your own configuration: online, or offline
# through url.<base>.insteadOf to local mirrors, e.g. in a file of its own:
#
#   git config --file ~/mirrors.gitconfig url./srv/mirrors/cobra.git.insteadOf \
#       https://github.com/spf13/cobra.git
#   GIT_CONFIG_GLOBAL=~/mirrors.gitconfig scripts/check-eval-corpus.sh
#
# WARDEN_EVAL_CACHE_DIR keeps the fetched commits between runs (default: a
# temporary directory). Extra arguments go to go test (e.g. -run TestPublicCorpusHistory).
set -euo pipefail
cd "$(dirname "$0")/.."
WARDEN_EVAL_PUBLIC_CORPUS=1 exec go test ./eval ./cmd/warden -run 'TestPublicCorpus|TestEvalPublicCorpus' -count=1 -v "$@"
