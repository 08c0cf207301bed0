package machine

import "simkron/workload"

// HostView is h as workloads see it.
func HostView(h *Host) workload.Host { return hostView{h} }
