// Package apps links in the workloads simkron is built with: each program
// package under stack/apps registers its workload types with package
// workload when it is linked, and a command (or a test) that runs
// experiments imports this package for its side effect. A workload kept
// elsewhere registers itself the same way; nothing else names it.
//
// Each workload lives in the package named as the workload a user types
// in [workload.NAME] (stack/apps/NAME; yesv2interleave for
// "yesv2-interleave", a Go name having no hyphen), so that a reader who
// knows the workload finds its code by its name. What several of them
// share is a package that registers no workload: latency, the echo
// latency over a series of message sizes that udp, tcp, via and tp4 run
// over their protocols and compare sets side by side.
package apps

import (
	// The built-in workloads, each in the package named as it.
	_ "simkron/stack/apps/compare"
	_ "simkron/stack/apps/mac"
	_ "simkron/stack/apps/membench"
	_ "simkron/stack/apps/ping"
	_ "simkron/stack/apps/serve"
	_ "simkron/stack/apps/tcp"
	_ "simkron/stack/apps/top"
	_ "simkron/stack/apps/tp4"
	_ "simkron/stack/apps/ttcp"
	_ "simkron/stack/apps/udp"
	_ "simkron/stack/apps/via"
	_ "simkron/stack/apps/yesv2"
	_ "simkron/stack/apps/yesv2interleave" // yesv2-interleave
)
