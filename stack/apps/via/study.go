package via

import (
	"fmt"
	"slices"
	"strings"

	"simkron/stack/apps/compare"
	"simkron/stack/apps/latency"
)

// The Linux/SimOS study's statements about its results (Won et al., J.
// High Speed Networks 13, 2004, sec. 4;
// docs/reference/inet-notes.md sec. 8 and docs/reference/via.md sec. 6), checked by compare against
// what the series measured when [workload.compare] study =
// "linux-simos". They are the study's words, its figures' shapes; its
// improvement factors are a validation set that none of them names. Each
// check says exactly what it takes the words to mean.
func init() {
	compare.RegisterStudy(compare.Study{
		Name:   "linux-simos",
		Source: "Won et al., J. High Speed Networks 13 (2004), sec. 4 (docs/reference/inet-notes.md sec. 8, docs/reference/via.md sec. 6)",
		Check:  linuxSimOS,
	})
}

// studyRows gives the checks the rows of one protocol by size.
type studyRows map[string][]latency.Row

// get returns protocol p's row of n bytes and whether there is one.
func (rs studyRows) get(p string, n int) (latency.Row, bool) {
	for _, r := range rs[p] {
		if r.Size == n && r.Send.N > 0 && r.Receive.N > 0 {
			return r, true
		}
	}
	return latency.Row{}, false
}

// sizes returns the sizes every protocol of ps measured.
func (rs studyRows) sizes(ps ...string) []int {
	var out []int
	for _, r := range rs[ps[0]] {
		ok := true
		for _, p := range ps {
			_, has := rs.get(p, r.Size)
			ok = ok && has
		}
		if ok {
			out = append(out, r.Size)
		}
	}
	return out
}

// lay returns a layer's mean cycles in ls.
func lay(ls []latency.LayerCost, name string) float64 {
	for _, l := range ls {
		if l.Layer == name {
			return l.Cycles
		}
	}
	return 0
}

// share is part of whole in percent.
func share(part, whole float64) float64 { return 100 * part / max(whole, 1) }

func linuxSimOS(all map[string][]latency.Row, split int) []compare.Statement {
	rs := studyRows(all)
	var out []compare.Statement
	add := func(claim string, holds bool, model string, args ...any) {
		out = append(out, compare.Statement{Claim: claim, Holds: holds, Model: fmt.Sprintf(model, args...)})
	}
	if sz := rs.sizes("udp"); len(sz) >= 2 {
		lo, hi := sz[0], sz[len(sz)-1]
		a, _ := rs.get("udp", lo)
		b, _ := rs.get("udp", hi)
		appl := [2]float64{lay(a.SendLayers, "APPL"), lay(b.SendLayers, "APPL")}
		udp := [2]float64{lay(a.SendLayers, "UDP"), lay(b.SendLayers, "UDP")}
		flat := true
		for _, n := range sz {
			r, _ := rs.get("udp", n)
			flat = flat && near(lay(r.SendLayers, "APPL"), appl[0], 0.1) && near(lay(r.SendLayers, "UDP"), udp[0], 0.1)
		}
		add("UDP send: APPL and UDP are small and remain relatively constant (APPL and UDP within 10% of their smallest message's at every size, together at most 20% of the send from 1 KiB up)",
			flat && smallFrom(rs, "udp", 1024, 20, "APPL", "UDP"),
			"APPL %.0f and UDP %.0f cycles at %d B, %.0f and %.0f at %d B (%.0f%% of the send)", appl[0], udp[0], lo, appl[1], udp[1], hi, share(appl[1]+udp[1], b.Send.Mean))
		ipdev := lay(b.SendLayers, "IP") + lay(b.SendLayers, "DEV")
		add("UDP send: IP and DEV dominate as the message size grows (together over half of the largest message's send)",
			ipdev > b.Send.Mean/2, "IP and DEV %.0f of %.0f cycles at %d B (%.0f%%)", ipdev, b.Send.Mean, hi, share(ipdev, b.Send.Mean))
		if below, above, ok := slopes(rs, "udp", split, func(r latency.Row) float64 { return lay(r.SendLayers, "IP") }); ok {
			add("UDP send: for messages larger than the MTU, IP increases significantly with the size (fragmentation, the copy from user space, checksumming: more cycles a byte above the MTU than below)",
				above > below, "IP %.2f cycles a byte below the MTU, %.2f above", below, above)
		}
		worst, at := 100.0, 0
		for _, n := range sz {
			if r, _ := rs.get("udp", n); n > 4096 {
				if s := share(lay(r.SendLayers, "DMA"), r.Send.Mean); s < worst {
					worst, at = s, n
				}
			}
		}
		if at > 0 {
			add("UDP send: DMA takes a significant portion of the latency for messages over 4 KB (at least 10% at every size above 4 KiB)",
				worst >= 10, "DMA %.0f%% of the send at %d B, the least above 4 KiB", worst, at)
		}
	}
	if sz := rs.sizes("tcp"); len(sz) > 0 {
		var notLargest []string
		ipMax, ipAt := 0.0, 0
		for _, n := range sz {
			r, _ := rs.get("tcp", n)
			t := lay(r.SendLayers, "TCP")
			for _, l := range r.SendLayers {
				if l.Layer != "TCP" && l.Cycles >= t {
					notLargest = append(notLargest, fmt.Sprintf("%d B (%s %.0f, TCP %.0f)", n, l.Layer, l.Cycles, t))
					break
				}
			}
			if s := share(lay(r.SendLayers, "IP"), r.Send.Mean); s > ipMax {
				ipMax, ipAt = s, n
			}
		}
		model := "TCP the largest layer at every size"
		if len(notLargest) > 0 {
			model = fmt.Sprintf("another layer as large at %d of %d sizes: %s", len(notLargest), len(sz), notLargest[0])
		}
		add("TCP send: TCP constitutes the largest portion of the time (the largest layer at every size)", len(notLargest) == 0, "%s", model)
		add("TCP send: IP represents only a small portion (at most 10% at every size)", ipMax <= 10, "IP at most %.0f%% of the send (at %d B)", ipMax, ipAt)
	}
	if sz := rs.sizes("via"); len(sz) > 0 {
		even, evenWorst := true, ""
		for _, n := range sz {
			if n > 1024 {
				continue
			}
			r, _ := rs.get("via", n)
			v := []float64{lay(r.SendLayers, "APPL"), lay(r.SendLayers, "TRANS"), lay(r.SendLayers, "DEV")}
			if slices.Min(v) < slices.Max(v)/2 {
				even = false
				if evenWorst == "" {
					evenWorst = fmt.Sprintf("at %d B APPL %.0f, TRANS %.0f, DEV %.0f cycles", n, v[0], v[1], v[2])
				}
			}
		}
		if evenWorst == "" {
			evenWorst = "none of APPL, TRANS, DEV below half the largest of them up to 1 KiB"
		}
		add("M-VIA send: latencies are relatively evenly spread among APPL, TRANS and DEV for messages up to 1 KB (none of the three below half the largest)", even, "%s", evenWorst)
		most, mostAt := 100.0, 0
		for _, n := range sz {
			if r, _ := rs.get("via", n); n > 1024 {
				if s := share(lay(r.SendLayers, "DMA"), r.Send.Mean); s < most {
					most, mostAt = s, n
				}
			}
		}
		if mostAt > 0 {
			add("M-VIA send: beyond 1 KB DMA takes up most of the latency (over half of the send at every size above 1 KiB)",
				most > 50, "DMA %.0f%% of the send at %d B, the least above 1 KiB", most, mostAt)
			a, _ := rs.get("via", 1024)
			b, _ := rs.get("via", sz[len(sz)-1])
			grow := lay(b.SendLayers, "TRANS") >= 2*lay(a.SendLayers, "TRANS") && lay(b.SendLayers, "DEV") >= 2*lay(a.SendLayers, "DEV")
			add("M-VIA send: beyond 1 KB TRANS and DEV also increase significantly (fragmentation, interrupt handling: at least twice their 1 KiB cycles at the largest size)",
				grow, "TRANS %.0f -> %.0f, DEV %.0f -> %.0f cycles from 1024 B to %d B", lay(a.SendLayers, "TRANS"), lay(b.SendLayers, "TRANS"), lay(a.SendLayers, "DEV"), lay(b.SendLayers, "DEV"), b.Size)
		}
	}
	if sz := rs.sizes("udp"); len(sz) >= 2 {
		var lo int
		for _, n := range sz {
			if n <= split {
				lo = n
			}
		}
		if a, ok := rs.get("udp", lo); ok && sz[len(sz)-1] > split {
			b, _ := rs.get("udp", sz[len(sz)-1])
			grows := true
			best := map[string]float64{}
			for _, l := range b.RecvLayers {
				if l.Layer == "APPL" {
					continue
				}
				g := l.Cycles - lay(a.RecvLayers, l.Layer)
				best[l.Layer] = g
				grows = grows && l.Cycles >= 2*lay(a.RecvLayers, l.Layer)
			}
			top := topTwo(best)
			add("UDP receive: for messages larger than the MTU every layer but APPL increases rapidly, UDP and IP the most (each at least doubles from the largest message below the MTU to the largest, UDP and IP gaining the most cycles)",
				grows && slices.Contains(top, "UDP") && slices.Contains(top, "IP"), "from %d B to %d B the most cycles gained by %v", lo, b.Size, top)
		}
	}
	if sz := rs.sizes("udp", "tcp", "via"); len(sz) > 0 {
		slower := ""
		for _, n := range sz {
			u, _ := rs.get("udp", n)
			t, _ := rs.get("tcp", n)
			v, _ := rs.get("via", n)
			for _, x := range []struct {
				what, p string
				other   float64
				via     float64
			}{{"send", "UDP", u.Send.Median, v.Send.Median}, {"send", "TCP", t.Send.Median, v.Send.Median},
				{"receive", "UDP", u.Receive.Median, v.Receive.Median}, {"receive", "TCP", t.Receive.Median, v.Receive.Median}} {
				if x.via >= x.other && slower == "" {
					slower = fmt.Sprintf("at %d B VIA's %s takes %.0f cycles, %s's %.0f", n, x.what, x.via, x.p, x.other)
				}
			}
		}
		if slower == "" {
			slower = "VIA below UDP and TCP in send and receive at every size"
		}
		add("Fig. 5: the advantage of low-latency, user-level messaging (M-VIA's send and receive below UDP's and TCP's at every size)", slower == "VIA below UDP and TCP in send and receive at every size", "%s", slower)
		var small, large [2]float64
		var ns, nl int
		for _, n := range sz {
			u, _ := rs.get("udp", n)
			t, _ := rs.get("tcp", n)
			v, _ := rs.get("via", n)
			f := [2]float64{(u.Send.Median/v.Send.Median + t.Send.Median/v.Send.Median) / 2, (u.Receive.Median/v.Receive.Median + t.Receive.Median/v.Receive.Median) / 2}
			if n <= split {
				small[0], small[1], ns = small[0]+f[0], small[1]+f[1], ns+1
			} else {
				large[0], large[1], nl = large[0]+f[0], large[1]+f[1], nl+1
			}
		}
		if ns > 0 && nl > 0 {
			for i := range 2 {
				small[i] /= float64(ns)
				large[i] /= float64(nl)
			}
			add("Fig. 5: the advantage is largest for small messages (M-VIA's mean improvement factor over UDP and TCP higher up to the MTU than above it, for send and receive)",
				small[0] > large[0] && small[1] > large[1], "send %.2f up to the MTU, %.2f above; receive %.2f and %.2f", small[0], large[0], small[1], large[1])
		}
	}
	return out
}

// near reports whether x lies within frac of y.
func near(x, y, frac float64) bool { return x >= y*(1-frac) && x <= y*(1+frac) }

// smallFrom reports whether layers together take at most pct percent of
// protocol p's send at every size from n up.
func smallFrom(rs studyRows, p string, n int, pct float64, layers ...string) bool {
	for _, r := range rs[p] {
		if r.Size < n || r.Send.N == 0 {
			continue
		}
		var sum float64
		for _, l := range layers {
			sum += lay(r.SendLayers, l)
		}
		if share(sum, r.Send.Mean) > pct {
			return false
		}
	}
	return true
}

// slopes returns v's cycles a byte from the smallest size to the largest
// at most split, and from there to the largest size.
func slopes(rs studyRows, p string, split int, v func(latency.Row) float64) (below, above float64, ok bool) {
	sz := rs.sizes(p)
	var mid int
	for _, n := range sz {
		if n <= split {
			mid = n
		}
	}
	if len(sz) < 3 || mid == sz[0] || mid == sz[len(sz)-1] {
		return 0, 0, false
	}
	a, _ := rs.get(p, sz[0])
	m, _ := rs.get(p, mid)
	b, _ := rs.get(p, sz[len(sz)-1])
	return (v(m) - v(a)) / float64(mid-sz[0]), (v(b) - v(m)) / float64(b.Size-mid), true
}

// topTwo returns the two layers of gain with the most, in order (ties by
// name).
func topTwo(gain map[string]float64) []string {
	var ls []string
	for l := range gain {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b string) int {
		switch {
		case gain[a] > gain[b]:
			return -1
		case gain[a] < gain[b]:
			return 1
		}
		return strings.Compare(a, b)
	})
	return ls[:min(2, len(ls))]
}
