// Package apps links in the workloads simkron is built with: each program
// package under stack/apps registers its workload types with package
// workload when it is linked, and a command (or a test) that runs
// experiments imports this package for its side effect. A workload kept
// elsewhere registers itself the same way; nothing else names it.
package apps

import (
	// The built-in workloads.
	_ "simkron/stack/apps/atminterleave" // yesv2-interleave
	_ "simkron/stack/apps/atmloop"       // yesv2
	_ "simkron/stack/apps/latency"       // udp, tcp, compare
	_ "simkron/stack/apps/macbench"      // mac
	_ "simkron/stack/apps/membench"      // membench
	_ "simkron/stack/apps/ping"          // ping
	_ "simkron/stack/apps/serve"         // serve
	_ "simkron/stack/apps/topbench"      // top
	_ "simkron/stack/apps/tp4echo"       // tp4
	_ "simkron/stack/apps/ttcp"          // ttcp
	_ "simkron/stack/apps/vpingpong"     // via
)
