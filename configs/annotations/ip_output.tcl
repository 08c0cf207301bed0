# Time every ip_output call, count the cards' interrupts per host, and
# print the statistics when the simulation ends (SimOS-style annotations).
#
#   go run ./cmd/simkron run configs/udp-ne2000.toml --annotate configs/annotations/ip_output.tcl

annotation set pc ip_output:START { set t([host]) [cycles] }
annotation set pc ip_output:END   { bucket add ip_output [expr {[cycles] - $t([host])}] }
annotation set device nic0 irq    { incr irqs([host]) }
annotation set sim exit {
    foreach h [lsort [array names irqs]] { puts "$h: $irqs($h) NE2000 interrupts" }
    puts [bucket report]
}
