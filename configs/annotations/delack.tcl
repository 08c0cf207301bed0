# Watch the delayed-ACK timer: when each ACK it sends leaves, on which
# host, and how far apart those ACKs are; and how long tcp_output takes
# per call. On the ttcp stall, the receiver's ACKs come 200 ms apart, on
# the ticks of 4.4BSD's fast timer.
#
#   go run ./cmd/simkron run configs/ttcp-stall.toml --annotate configs/annotations/delack.tcl

annotation set pc tcp_delack_timer:START {
    set h [host]
    set ms [expr {[now] / 1e9}]
    if {[info exists last($h)]} { bucket add "$h delack gap ms" [expr {$ms - $last($h)}] }
    set last($h) $ms
    incr fired($h)
}
annotation set pc tcp_output:START { set t([host]) [cycles] }
annotation set pc tcp_output:END   { bucket add "[host] tcp_output cycles" [expr {[cycles] - $t([host])}] }
annotation set sim exit {
    foreach h [lsort [array names fired]] { puts "$h: the delayed-ACK timer ran $fired($h) times" }
    puts [bucket report]
}
