package main

import (
	"runtime/debug"
	"sync"

	"github.com/org/warden/cli"
)

// version is set at build time with -ldflags "-X main.version=..." (the
// release build and the Action's source build do); "dev" when nothing was
// stamped. Everything that names warden's version reads wardenBuild().
var version = "dev"

// wardenBuild is this binary's build (cli.ReadBuild), read once.
var wardenBuild = sync.OnceValue(func() cli.Build {
	bi, _ := debug.ReadBuildInfo()
	return cli.ReadBuild(version, bi)
})
