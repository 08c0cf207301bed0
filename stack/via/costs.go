package via

import "simkron/cpu"

// Costs of the VIPL's and the agent's functions in instructions per call,
// estimated from the shape of M-VIA 1.x's vipl and vipk_core C (memory
// references, copies, cache misses, traps and device accesses are charged
// as they happen, not here).
var (
	// The VIPL, user level (APPL, as the study counts VipPostSend's own
	// work).
	defPostSend = cpu.Def{Name: "VipPostSend", Layer: cpu.LayerAPPL, Instructions: 45, CodeBytes: 384, Why: "check the VI handle, clear the descriptor's status and link, link it behind the send queue's tail, ring the doorbell (vipl)"}
	defPostRecv = cpu.Def{Name: "VipPostRecv", Layer: cpu.LayerAPPL, Instructions: 45, CodeBytes: 384, Why: "check the VI handle, clear status and link, link it behind the receive queue's tail, enter the agent (vipl)"}
	defSendDone = cpu.Def{Name: "VipSendDone", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 192, Why: "read the send queue head's status, unlink it when done"}
	defRecvDone = cpu.Def{Name: "VipRecvDone", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 192, Why: "read the receive queue head's status, unlink it when done"}
	defSendWait = cpu.Def{Name: "VipSendWait", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "poll the head's status; if not done, block in the agent"}
	defRecvWait = cpu.Def{Name: "VipRecvWait", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "poll the head's status; if not done, block in the agent"}
	defCQDone   = cpu.Def{Name: "VipCQDone", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 192, Why: "read the CQ head entry, consume it when valid"}
	defCQWait   = cpu.Def{Name: "VipCQWait", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "poll the CQ head; if empty, block in the agent"}
	defVIPLCall = cpu.Def{Name: "vipl_ioctl", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 512, Why: "argument checks and marshalling of a VIPL call that the kernel agent serves (open, register, create, connect)"}

	// The kernel agent (TRANS).
	defFtrap       = cpu.Def{Name: "vipk_ftrap", Layer: cpu.LayerTRANS, Instructions: 12, CodeBytes: 128, Why: "fast-trap entry and exit: check the trap number, save only the registers the agent uses, no generic system-call dispatch (M-VIA vipk_ftrap.S)"}
	defKPostSend   = cpu.Def{Name: "vipk_post_send", Layer: cpu.LayerTRANS, Instructions: 70, CodeBytes: 768, Why: "find the VI, check its state, read and check the control segment, number the message"}
	defKPostRecv   = cpu.Def{Name: "vipk_post_recv", Layer: cpu.LayerTRANS, Instructions: 60, CodeBytes: 768, Why: "find the VI, read and check the control segment, append to the kernel's receive queue"}
	defTranslate   = cpu.Def{Name: "vipk_translate", Layer: cpu.LayerTRANS, Instructions: 15, CodeBytes: 256, Why: "per data segment: find the region's translation table"}
	defFragment    = cpu.Def{Name: "vipk_fragment", Layer: cpu.LayerTRANS, Instructions: 45, CodeBytes: 640, Why: "per frame: Ethernet and M-VIA headers into a header buffer, cut the translated segments at the frame's bytes, hand the frame to the device"}
	defSendDoneK   = cpu.Def{Name: "vipk_send_complete", Layer: cpu.LayerTRANS, Instructions: 30, CodeBytes: 256, Why: "write the descriptor's length and status, completion-queue entry, wake a waiter"}
	defFragDone    = cpu.Def{Name: "vipk_frag_done", Layer: cpu.LayerInherit, Instructions: 15, CodeBytes: 128, Why: "a fragment's DMA is done: free its header buffer, count down the message (in the driver's interrupt)"}
	defDMAWait     = cpu.Def{Name: "vipk_dma_wait", Layer: cpu.LayerDMA, Instructions: 4, CodeBytes: 64, Why: "set-up of the loop waiting for the NIC to have read the message"}
	defRcv         = cpu.Def{Name: "vipk_rcv", Layer: cpu.LayerTRANS, Instructions: 55, CodeBytes: 640, Why: "per frame: parse the M-VIA header, find the VI, check the peer and the message sequence"}
	defDefrag      = cpu.Def{Name: "vipk_defrag", Layer: cpu.LayerTRANS, Instructions: 30, CodeBytes: 384, Why: "per frame: find the fragment's place in the receive descriptor's segments, copy it there"}
	defRecvDoneK   = cpu.Def{Name: "vipk_recv_complete", Layer: cpu.LayerTRANS, Instructions: 35, CodeBytes: 256, Why: "write length, immediate data and status, unlink from the receive queue, CQ entry, wake a waiter"}
	defKWait       = cpu.Def{Name: "vipk_wait", Layer: cpu.LayerTRANS, Instructions: 35, CodeBytes: 256, Why: "recheck the condition, queue the thread on the VI's or CQ's wait queue"}
	defRegister    = cpu.Def{Name: "vipk_register_mem", Layer: cpu.LayerTRANS, Instructions: 150, CodeBytes: 1024, Why: "check the Ptag, allocate a region and its translation table, return the handle"}
	defDeregister  = cpu.Def{Name: "vipk_deregister_mem", Layer: cpu.LayerTRANS, Instructions: 100, CodeBytes: 512, Why: "check the handle, unpin the pages, free the table"}
	defKOpenNic    = cpu.Def{Name: "vipk_open_nic", Layer: cpu.LayerTRANS, Instructions: 120, CodeBytes: 512, Why: "find the device by name, open the provider instance"}
	defKPtag       = cpu.Def{Name: "vipk_create_ptag", Layer: cpu.LayerTRANS, Instructions: 40, CodeBytes: 256, Why: "allocate a protection tag for the process"}
	defKCreateVi   = cpu.Def{Name: "vipk_create_vi", Layer: cpu.LayerTRANS, Instructions: 150, CodeBytes: 1024, Why: "check attributes, Ptag and CQs, allocate the VI and its kernel state"}
	defKCreateCQ   = cpu.Def{Name: "vipk_create_cq", Layer: cpu.LayerTRANS, Instructions: 100, CodeBytes: 512, Why: "allocate the completion ring and its state"}
	defKConnect    = cpu.Def{Name: "vipk_connect", Layer: cpu.LayerTRANS, Instructions: 150, CodeBytes: 1536, Why: "connection manager: match a discriminator, check attributes, set up the peer, send the control frame"}
	defKDisconnect = cpu.Def{Name: "vipk_disconnect", Layer: cpu.LayerTRANS, Instructions: 100, CodeBytes: 768, Why: "tell the peer, flush both work queues, return to idle"}
	defConnRcv     = cpu.Def{Name: "vipk_conn_rcv", Layer: cpu.LayerTRANS, Instructions: 80, CodeBytes: 1024, Why: "a connection-management frame: match it to a listener or a VI, update states, answer"}
	defFlush       = cpu.Def{Name: "vipk_flush", Layer: cpu.LayerTRANS, Instructions: 25, CodeBytes: 256, Why: "per descriptor: complete it flushed, CQ entry"}
)

// Per-item costs inside the functions, overridable like a function's.
const (
	costSegment = "vipk_post.segment"
	costPage    = "vipk_translate.page"
	costPoll    = "vipk_dma_wait.poll"
	costPin     = "vipk_register_mem.page"
	costUnpin   = "vipk_deregister_mem.page"
	costRecvSeg = "vipk_defrag.segment"
)
