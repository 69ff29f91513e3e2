module github.com/org/warden/internal/browsertier

go 1.26.0

require github.com/org/warden v0.0.0

require (
	github.com/bluekeyes/go-gitdiff v0.9.0 // indirect
	github.com/bmatcuk/doublestar/v4 v4.10.4 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/sourcegraph/conc v0.3.0 // indirect
	github.com/yuin/goldmark v1.8.7
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/org/warden => ../..
