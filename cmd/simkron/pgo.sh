#!/usr/bin/env bash
# Rebuilds cmd/simkron/default.pgo: the CPU profile that `go build` and
# `go run ./cmd/simkron` use for profile-guided optimisation (inlining and
# devirtualisation at the hot call sites). It merges the UDP and TCP
# benchmarks (./machine) with whole runs of the TOP, ATM, SimOS-study, TCP
# and UDP configs. Run it from the project root when the hot paths have
# moved; a stale profile costs speed, never results (the golden test is
# built with it).
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -pgo=off -run '^$' -bench 'UDPRoundTrips1KiB|TCPSegments' -benchtime 2s \
  -cpuprofile "$tmp/bench.prof" -o "$tmp/machine.test" ./machine >/dev/null
go build -pgo=off -o "$tmp/simkron" ./cmd/simkron
for c in top-lower atm-ip simos-study tcp-ne2000 tcp-r4000 udp-ne2000 udp-r4000; do
  "$tmp/simkron" run --cpuprofile "$tmp/$c.prof" "configs/$c.toml" >/dev/null
done
go tool pprof -proto "$tmp"/*.prof >cmd/simkron/default.pgo
