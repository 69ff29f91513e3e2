module github.com/org/warden

go 1.26.0

require github.com/google/go-github/v62 v62.0.0

require (
	github.com/bluekeyes/go-gitdiff v0.9.0 // indirect
	github.com/bmatcuk/doublestar/v4 v4.10.4 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/sashabaranov/go-openai v1.43.0 // indirect
	github.com/sethvargo/go-githubactions v1.3.0 // indirect
	github.com/sourcegraph/conc v0.3.0 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/term v0.48.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
