package annotations_test

import (
	"fmt"

	"simkron/annotations"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/stack/apps/udp"
)

// An annotation script counts the datagrams each host's IP layer receives
// and sums the cycles of the client's udp_sendmsg calls; the engine is
// installed between building the run and executing it.
func Example() {
	exp, err := machine.LoadExperiment("../configs/udp-ne2000.toml")
	if err != nil {
		panic(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	udp := exp.Workload.Params["udp"].(*udp.Params)
	udp.Sizes = []int{64}
	udp.Messages, udp.Warmup = 3, 1
	opt := machine.Options{}
	r, err := machine.New(exp, opt)
	if err != nil {
		panic(err)
	}
	e, err := annotations.New(r.AnnotationTarget(), []annotations.Source{{Name: "count.tcl", Text: `
annotation set pc ip_rcv:START { incr ::received([host]) }
annotation set pc udp_sendmsg:START { set ::t0 [cycles] }
annotation set pc udp_sendmsg:END {
	if {[host] eq "pcA"} { bucket add sendmsg [expr {[cycles] - $::t0}] }
}
annotation set sim exit {
	foreach h [lsort [array names ::received]] { puts "$h received $::received($h) datagrams" }
	puts "pcA sent [bucket get sendmsg count] messages"
}
`}}, annotations.Options{})
	if err != nil {
		panic(err)
	}
	if err := e.Install(); err != nil {
		panic(err)
	}
	if _, err := r.Execute(opt); err != nil {
		panic(err)
	}
	if err := e.Finish(); err != nil {
		panic(err)
	}
	fmt.Print(e.Output())
	// Output:
	// pcA received 4 datagrams
	// pcB received 4 datagrams
	// pcA sent 4 messages
}
