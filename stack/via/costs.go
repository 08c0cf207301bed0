package via

import "simkron/cpu"

// Costs of the VIPL's and the agent's functions in instructions per call.
// Each is a count of the MIPS instructions the function's work takes, as
// its Why itemises it: the work is what VIA 1.0's calls must do (docs/reference/via.md
// secs. 2-3) along the code paths of M-VIA 1.x's vipl and vipk_core that
// the M-VIA design pages describe (docs/reference/via.md sec. 4); prologues and
// epilogues of compiled C are about 8 instructions a function. Memory
// references (the descriptor's 32-byte control segment and 16-byte data
// segment, two 32-byte cache lines on the study's Mipsy), copies, cache
// misses, the trap's exception entry and return (the core's trap_cycles)
// and device accesses are charged as they happen, not here.
var (
	// The VIPL, user level (APPL, as the study counts VipPostSend's own
	// work).
	defPostSend = cpu.Def{Name: "VipPostSend", Layer: cpu.LayerAPPL, Instructions: 45, CodeBytes: 384, Why: "check the VI handle (load, compare owner and state: 8) and the descriptor's 64-byte alignment (2); clear its Status and Next link and handle (3 stores); the fast trap with the VI number and the descriptor's address and handle in argument registers (6); on return link it behind the send queue's tail (load the tail, store Next and NextHandle, move the tail: 8); return code (4); prologue and epilogue, 14 with the call into the trap stub"}
	defPostRecv = cpu.Def{Name: "VipPostRecv", Layer: cpu.LayerAPPL, Instructions: 45, CodeBytes: 384, Why: "as VipPostSend for the receive queue: handle and alignment checks (10), clear Status and link (3), fast trap with its arguments (6), link behind the tail (8), return code (4), prologue, epilogue and call (14)"}
	defSendDone = cpu.Def{Name: "VipSendDone", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 192, Why: "check the handle (4), load the send queue's head and its Status word, test DONE (4), unlink it (2 stores), return it (2); prologue and epilogue (8)"}
	defRecvDone = cpu.Def{Name: "VipRecvDone", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 192, Why: "as VipSendDone on the receive queue: handle (4), head and DONE test (4), unlink (2), return (2), prologue and epilogue (8)"}
	defSendWait = cpu.Def{Name: "VipSendWait", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "VipSendDone's test of the head (12), and if not done the fast trap into the agent's wait with the VI, the queue and the timeout (10); prologue and epilogue (8)"}
	defRecvWait = cpu.Def{Name: "VipRecvWait", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "VipRecvDone's test of the head (12), and if not done the fast trap into the agent's wait with the VI, the queue and the timeout (10); prologue and epilogue (8)"}
	defCQDone   = cpu.Def{Name: "VipCQDone", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 192, Why: "check the CQ handle (4), load the head entry and test its valid bit (4), clear it and advance the head (4); prologue and epilogue (8)"}
	defCQWait   = cpu.Def{Name: "VipCQWait", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "VipCQDone's test (12), and if empty the fast trap into the agent's wait (10); prologue and epilogue (8)"}
	defVIPLCall = cpu.Def{Name: "vipl_ioctl", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 512, Why: "a VIPL call the kernel agent serves by a system call (open, register, create, connect): check the arguments (20), marshal them into the request block (20), the ioctl's system-call set-up and its return code (12); prologue and epilogue (8)"}

	// The kernel agent (TRANS).
	defFtrap       = cpu.Def{Name: "vipk_ftrap", Layer: cpu.LayerTRANS, Instructions: 12, CodeBytes: 128, Why: "the fast trap's stub, which the study's port rewrote for MIPS's system-call convention (vipk_ftrap.S): compare the trap number with the agent's (2), save the registers the agent's C code may clobber that the exception entry left (6), call the handler and return from the exception (4); the exception entry and return are the core's trap_cycles, the generic system-call dispatch is skipped"}
	defKPostSend   = cpu.Def{Name: "vipk_post_send", Layer: cpu.LayerTRANS, Instructions: 70, CodeBytes: 768, Why: "find the VI by its number in the VI table and check its owner (10) and state (3); read the control segment (Next, Length, SegCount, Control) and check the op, the reserved bits and SegCount (10); take a kernel descriptor from the VI's free list (8); number the message (3); append it to the VI's send queue (6); set up the loops over segments and frames (10); prologue and epilogue (20, three calls)"}
	defKPostRecv   = cpu.Def{Name: "vipk_post_recv", Layer: cpu.LayerTRANS, Instructions: 60, CodeBytes: 768, Why: "as vipk_post_send without numbering or sending: the VI (13), the control segment and its checks (10), a kernel descriptor (8), append to the kernel's receive queue (6), the segment loop (8); prologue and epilogue (15)"}
	defTranslate   = cpu.Def{Name: "vipk_translate", Layer: cpu.LayerTRANS, Instructions: 15, CodeBytes: 256, Why: "per data segment: the region's translation table from its record (3), the first page's index and offset (5), the page loop's set-up (7); each page then costs vipk_translate.page"}
	defFragment    = cpu.Def{Name: "vipk_fragment", Layer: cpu.LayerTRANS, Instructions: 45, CodeBytes: 640, Why: "per frame: the Ethernet header and the M-VIA header (destination, source, type, VI numbers, sequence, message length, offset, payload length, flags: 10 stores) into a header buffer (a kmalloc call, 4); cut the translated runs at the frame's bytes into a gather list (10); hand the list and its completion to the driver (5); prologue and epilogue (16, two calls)"}
	defSendDoneK   = cpu.Def{Name: "vipk_send_complete", Layer: cpu.LayerInherit, Instructions: 30, CodeBytes: 256, Why: "write the descriptor's Length, Immediate and Status (3 stores, Status last), unlink the kernel descriptor from the send queue (6), a completion-queue entry if the queue is bound to one (4), wake a waiter (6); prologue and epilogue (11); in its caller's layer: the DMA-completion interrupt (DEV) after an asynchronous post, the agent (TRANS) in a synchronous one"}
	defFragDone    = cpu.Def{Name: "vipk_frag_done", Layer: cpu.LayerInherit, Instructions: 15, CodeBytes: 128, Why: "a fragment's DMA is done, in the driver's interrupt (its layer): free its header buffer (a kfree call, 3), count the message down (load, subtract, store, test: 4); prologue and epilogue (8)"}
	defDMAWait     = cpu.Def{Name: "vipk_dma_wait", Layer: cpu.LayerDMA, Instructions: 4, CodeBytes: 64, Why: "synchronous posts only: set-up of the loop waiting for the NIC to have read the message (4); each turn is vipk_dma_wait.poll"}
	defRcv         = cpu.Def{Name: "vipk_rcv", Layer: cpu.LayerTRANS, Instructions: 55, CodeBytes: 640, Why: "per frame, in the driver's receive interrupt as M-VIA's device drivers hand the agent its frames (in the receive softirq behind a driver without that, the NE2000's): load and check the M-VIA header (type, lengths: 15), find the VI by its number (8), check its state (3), the sender's MAC address (two loads and compares each side: 6) and VI number (3), dispatch on the frame's type (4); prologue and epilogue (16, two calls)"}
	defDefrag      = cpu.Def{Name: "vipk_defrag", Layer: cpu.LayerTRANS, Instructions: 30, CodeBytes: 384, Why: "per frame: check the message sequence and the fragment's offset against the reassembly (10), take the receive queue's head descriptor for a first fragment (6), find the fragment's place in its segments (6); prologue and epilogue (8); each segment a fragment's bytes land in is vipk_defrag.segment, the copy is bcopy's"}
	defRecvDoneK   = cpu.Def{Name: "vipk_recv_complete", Layer: cpu.LayerTRANS, Instructions: 35, CodeBytes: 256, Why: "write Length, Immediate data and Status (3 stores), unlink the descriptor from the receive queue (6), free the kernel descriptor (6), a completion-queue entry if bound (4), wake a waiter (6); prologue and epilogue (10)"}
	defKWait       = cpu.Def{Name: "vipk_wait", Layer: cpu.LayerTRANS, Instructions: 35, CodeBytes: 256, Why: "recheck the condition (load the Status word or the CQ entry: 4), put the thread on the VI's or CQ's wait queue (8), call the scheduler's sleep (its context switch is the core's) with the timeout (10), take it off when woken (5); prologue and epilogue (8)"}
	defRegister    = cpu.Def{Name: "vipk_register_mem", Layer: cpu.LayerTRANS, Instructions: 150, CodeBytes: 1024, Why: "once per region, not on the measured path: check the Ptag and the range (20), find a free region slot (20), allocate the translation table (kmalloc call, 30), fill the region record (20), return the handle (10), prologue and the system call's own argument copying (50); each page then costs vipk_register_mem.page"}
	defDeregister  = cpu.Def{Name: "vipk_deregister_mem", Layer: cpu.LayerTRANS, Instructions: 100, CodeBytes: 512, Why: "once per region: check the handle and owner (20), free the table (kfree call, 30), clear the record (20), prologue and argument copying (30); each page then costs vipk_deregister_mem.page"}
	defKOpenNic    = cpu.Def{Name: "vipk_open_nic", Layer: cpu.LayerTRANS, Instructions: 120, CodeBytes: 512, Why: "once: find the device by name among the agent's (a string compare each), open the provider instance and its record"}
	defKPtag       = cpu.Def{Name: "vipk_create_ptag", Layer: cpu.LayerTRANS, Instructions: 40, CodeBytes: 256, Why: "once: allocate a protection tag for the process and record its owner"}
	defKCreateVi   = cpu.Def{Name: "vipk_create_vi", Layer: cpu.LayerTRANS, Instructions: 150, CodeBytes: 1024, Why: "once per VI: check attributes, Ptag and CQs, allocate the VI and its kernel entry, initialise its queues"}
	defKCreateCQ   = cpu.Def{Name: "vipk_create_cq", Layer: cpu.LayerTRANS, Instructions: 100, CodeBytes: 512, Why: "once per CQ: allocate the completion ring and its state"}
	defKConnect    = cpu.Def{Name: "vipk_connect", Layer: cpu.LayerTRANS, Instructions: 150, CodeBytes: 1536, Why: "connection manager, per call: match a discriminator, check attributes, set up the peer, send the control frame"}
	defKDisconnect = cpu.Def{Name: "vipk_disconnect", Layer: cpu.LayerTRANS, Instructions: 100, CodeBytes: 768, Why: "tell the peer, flush both work queues, return to idle"}
	defConnRcv     = cpu.Def{Name: "vipk_conn_rcv", Layer: cpu.LayerTRANS, Instructions: 80, CodeBytes: 1024, Why: "a connection-management frame: match it to a listener or a VI, update states, answer"}
	defFlush       = cpu.Def{Name: "vipk_flush", Layer: cpu.LayerTRANS, Instructions: 25, CodeBytes: 256, Why: "per descriptor: complete it flushed (a Status store), a CQ entry"}
)

// Per-item costs inside the functions, overridable like a function's; the
// counts and their reasons are given where the agent sets them up
// (agent.go, New).
const (
	costSegment = "vipk_post.segment"
	costPage    = "vipk_translate.page"
	costPoll    = "vipk_dma_wait.poll"
	costPin     = "vipk_register_mem.page"
	costUnpin   = "vipk_deregister_mem.page"
	costRecvSeg = "vipk_defrag.segment"
)
