package atmtaxi

import (
	"errors"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/kernel"
)

// Raw ATM sockets: the MSNL-like path of the seed's loop-back test. A
// program opens a socket on a VC and sends and receives whole PDUs on it.
//
//	Ultrix:  Send(buf) ─ trap ─ sosend: kmalloc, uiomove (copy in) ─
//	         driver ─ kfree. For mode A the copy puts a header word
//	         before every 48 bytes, a DMA transfer's worth of cells at a
//	         time, each block going to the board while the next is
//	         copied (the driver's formatBlocks).
//	         Recv(buf) ─ trap ─ soreceive: wait, dequeue, uiomove (copy
//	         out), free.
//	Wanda:   Send(ipc) ─ trap ─ the IPC buffer goes to the driver as it is.
//	         RecvIPC() ─ trap ─ wait, and the IPC buffer the driver filled
//	         becomes the caller's; ReleaseIPC gives it back to the pool.
//
// MSNL-like PDUs are whole cells (a multiple of 48 bytes); AAL5 sockets
// send any length up to raw_max_cells cells of PDU.

// Errors of the socket calls.
var (
	ErrNotReady  = errors.New("atm: interface not started")
	ErrVCInUse   = errors.New("atm: VC already open")
	ErrLength    = errors.New("atm: PDU length not allowed on this socket")
	ErrNotIPC    = errors.New("atm: buffer is not the caller's IPC buffer")
	ErrNoBuffer  = errors.New("atm: no buffer")
	ErrWrongCall = errors.New("atm: call not offered by this kernel personality")
	ErrBusy      = errors.New("atm: transmitter busy")
)

// Socket-layer costs (instructions per call), as the two kernels' paths
// would run them; copies, syscall entry and the driver are charged apart.
var (
	defSysSend    = cpu.Def{Name: "sys_atm_send", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 384, Why: "find the socket from the descriptor, check the arguments, call the protocol"}
	defSysRecv    = cpu.Def{Name: "sys_atm_recv", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 384, Why: "find the socket from the descriptor, check the arguments, call the protocol"}
	defSysOpen    = cpu.Def{Name: "sys_atm_open", Layer: cpu.LayerAPPL, Instructions: 200, CodeBytes: 768, Why: "allocate the socket, bind the VC, set up its reassembly"}
	defSosend     = cpu.Def{Name: "ultrix_sosend", Layer: cpu.LayerAPPL, Instructions: 250, CodeBytes: 1536, Why: "sblock, mbuf and cluster allocation for the PDU, PRU_SEND into the driver's output, sbunlock (4.3BSD sosend)"}
	defSoreceive  = cpu.Def{Name: "ultrix_soreceive", Layer: cpu.LayerAPPL, Instructions: 230, CodeBytes: 1536, Why: "sblock, wait for a record, dequeue the mbuf chain, free it, sbunlock (4.3BSD soreceive)"}
	defIPCSend    = cpu.Def{Name: "wanda_ipc_send", Layer: cpu.LayerAPPL, Instructions: 70, CodeBytes: 384, Why: "check the IPC buffer is the caller's, pass it to the channel's driver"}
	defIPCRecv    = cpu.Def{Name: "wanda_ipc_recv", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 384, Why: "wait on the channel, take the filled buffer, make the caller its owner"}
	defIPCAlloc   = cpu.Def{Name: "wanda_ipc_alloc", Layer: cpu.LayerAPPL, Instructions: 25, CodeBytes: 192, Why: "take an IPC buffer from the pool for the caller"}
	defSockRxDrop = cpu.Def{Name: "atm_sock_input", Layer: cpu.LayerDEV, Instructions: 25, CodeBytes: 192, Why: "queue a PDU on the socket (sbappend) or drop it, wake the reader"}
)

// rawQueueLimit is the PDUs a raw socket holds unread.
const rawQueueLimit = 32

// RawSocket is an open VC.
type RawSocket struct {
	d    *Driver
	vs   *vcState
	q    []rxPDU
	wait kernel.WaitQueue
	sym  struct{ send, recv, sosend, soreceive, ipcSend, ipcRecv, ipcAlloc, input *cpu.Symbol }
}

type rxPDU struct {
	buf memory.Addr
	n   int
}

// OpenRaw opens a raw socket on vc, with the MSNL-like SAR or AAL5. It
// runs as a system call of t.
func (d *Driver) OpenRaw(t *kernel.Thread, vc VC, aal5 bool) (*RawSocket, error) {
	s := &RawSocket{d: d}
	syms := d.k.Symbols()
	syms.DefineAll([]cpu.Binding{
		{&s.sym.send, defSysSend}, {&s.sym.recv, defSysRecv}, {&s.sym.sosend, defSosend}, {&s.sym.soreceive, defSoreceive},
		{&s.sym.ipcSend, defIPCSend}, {&s.sym.ipcRecv, defIPCRecv}, {&s.sym.ipcAlloc, defIPCAlloc}, {&s.sym.input, defSockRxDrop},
	})
	var err error
	t.Syscall(syms.Define(defSysOpen), func() {
		switch {
		case !d.ready:
			err = ErrNotReady
		case d.vcs[vc.VCI] != nil:
			err = fmt.Errorf("%w: %v", ErrVCInUse, vc)
		case !aal5 && d.p.HeaderInsertion:
			err = fmt.Errorf("%w: the MSNL-like SAR numbers every cell, which header insertion cannot", ErrLength)
		default:
			sar := sarMSNL
			if aal5 {
				sar = sarAAL5
			}
			s.vs = &vcState{vc: vc, sar: sar, sock: s, sorted: aal5 && d.p.Rx == Sort}
			d.vcs[vc.VCI] = s.vs
			if s.vs.sorted {
				d.armSort(s.vs, true)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// VC returns the socket's VC.
func (s *RawSocket) VC() VC { return s.vs.vc }

func (s *RawSocket) checkLen(n int) error {
	max := s.d.p.RawMaxCells * payloadBytes
	if s.vs.sar == sarAAL5 {
		if n <= 0 || header.AAL5PDULen(n) > max || n > header.AAL5MaxPayload {
			return fmt.Errorf("%w: %d bytes (AAL5 PDUs of at most %d)", ErrLength, n, max)
		}
		return nil
	}
	if n <= 0 || n%payloadBytes != 0 || n > max {
		return fmt.Errorf("%w: %d bytes (whole 48-byte cells, at most %d)", ErrLength, n, max)
	}
	return nil
}

// Send sends the PDU of n bytes at buf. On Ultrix buf is the program's
// memory, copied in; on Wanda it must be an IPC buffer of the pool, which
// the driver reads in place. It returns when the PDU is in the FIFO.
func (s *RawSocket) Send(t *kernel.Thread, buf memory.Addr, n int) error {
	d := s.d
	c := d.c
	var err error
	t.Syscall(s.sym.send, func() {
		if err = s.checkLen(n); err != nil {
			return
		}
		if d.p.Personality == Wanda {
			c.Call(s.sym.ipcSend, func() {
				if !d.pool.owns(buf) {
					err = ErrNotIPC
					return
				}
				if !d.transmit(s.vs, buf, n, 0) {
					err = ErrBusy
				}
			})
			return
		}
		c.Call(s.sym.sosend, func() {
			formatted := d.p.Tx == DMAA && s.vs.sar == sarMSNL && !d.p.HeaderInsertion
			size := n
			if formatted {
				size = n / payloadBytes * cellBytes
			}
			kbuf := d.k.Kmalloc(size)
			if kbuf == 0 {
				err = ErrNoBuffer
				return
			}
			defer d.k.Kfree(kbuf)
			user := buf
			if !formatted {
				d.k.Bcopy(kbuf, buf, n)
				user = 0
			}
			// Formatted: uiomove into mbufs laid out as mode-A cells, in
			// the driver, block by block as they go to the board.
			if !d.transmit(s.vs, kbuf, n, user) {
				err = ErrBusy
			}
		})
	})
	return err
}

// Recv waits for a PDU and copies it to buf (at most n bytes are
// copied); Ultrix only. It returns the PDU's length.
func (s *RawSocket) Recv(t *kernel.Thread, buf memory.Addr, n int) (int, error) {
	d := s.d
	if d.p.Personality != Ultrix {
		return 0, ErrWrongCall
	}
	got := 0
	t.Syscall(s.sym.recv, func() {
		d.c.Call(s.sym.soreceive, func() {
			p := s.take(t)
			got = p.n
			d.k.Bcopy(buf, p.buf, min(n, p.n))
			d.freeBuffer(s.vs, p.buf)
		})
	})
	return got, nil
}

// RecvIPC waits for a PDU and returns the IPC buffer holding it, now the
// caller's; Wanda only.
func (s *RawSocket) RecvIPC(t *kernel.Thread) (memory.Addr, int, error) {
	d := s.d
	if d.p.Personality != Wanda {
		return 0, 0, ErrWrongCall
	}
	var p rxPDU
	t.Syscall(s.sym.recv, func() {
		d.c.Call(s.sym.ipcRecv, func() { p = s.take(t) })
	})
	return p.buf, p.n, nil
}

// take waits until a PDU is queued and dequeues it.
func (s *RawSocket) take(t *kernel.Thread) rxPDU {
	for len(s.q) == 0 {
		t.Sleep(&s.wait)
	}
	p := s.q[0]
	s.q = append(s.q[:0], s.q[1:]...)
	return p
}

// AllocIPC gives the caller an IPC buffer of the pool (Wanda).
func (s *RawSocket) AllocIPC(t *kernel.Thread) (memory.Addr, error) {
	d := s.d
	if d.p.Personality != Wanda {
		return 0, ErrWrongCall
	}
	var b memory.Addr
	t.Syscall(s.sym.ipcAlloc, func() { b = d.pool.get() })
	if b == 0 {
		return 0, ErrNoBuffer
	}
	return b, nil
}

// ReleaseIPC gives an IPC buffer back to the pool (Wanda).
func (s *RawSocket) ReleaseIPC(t *kernel.Thread, b memory.Addr) {
	t.Syscall(s.sym.ipcAlloc, func() { s.d.pool.put(b) })
}

// arrive queues a PDU the driver reassembled (interrupt context).
func (s *RawSocket) arrive(buf memory.Addr, n int) {
	d := s.d
	d.c.Enter(s.sym.input)
	defer d.c.Exit(s.sym.input)
	if len(s.q) >= rawQueueLimit {
		d.stats.RxSocketFull++
		d.freeBuffer(s.vs, buf)
		return
	}
	s.q = append(s.q, rxPDU{buf, n})
	d.k.Wakeup(&s.wait)
}

// owns reports whether b is a buffer of the pool (not on its free list).
func (p *ipcPool) owns(b memory.Addr) bool {
	if !p.all[b] {
		return false
	}
	for _, f := range p.free {
		if f == b {
			return false
		}
	}
	return true
}
