// Package apps links in the workloads simkron is built with: each program
// package under stack/apps registers its workload types with package
// workload when it is linked, and a command (or a test) that runs
// experiments imports this package for its side effect. A workload kept
// elsewhere registers itself the same way; nothing else names it.
package apps

import (
	// The built-in workloads, each in the package named as it.
	_ "simkron/stack/apps/latency" // udp, tcp, compare
	_ "simkron/stack/apps/mac"
	_ "simkron/stack/apps/membench"
	_ "simkron/stack/apps/ping"
	_ "simkron/stack/apps/serve"
	_ "simkron/stack/apps/top"
	_ "simkron/stack/apps/tp4"
	_ "simkron/stack/apps/ttcp"
	_ "simkron/stack/apps/via"
	_ "simkron/stack/apps/yesv2"
	_ "simkron/stack/apps/yesv2interleave" // yesv2-interleave
)
