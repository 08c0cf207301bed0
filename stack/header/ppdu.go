package header

// ISO 8823 presentation PPDUs of the kernel functional unit in normal
// mode (ITU-T X.226 clause 8, the ASN.1 module ISO8823-PRESENTATION),
// BER encoded:
//
//	CP-type  ::= SET { mode-selector [0] IMPLICIT SET { mode-value [0] IMPLICIT INTEGER },
//	                   normal-mode-parameters [2] IMPLICIT SEQUENCE {
//	                     calling-presentation-selector [1] IMPLICIT OCTET STRING OPTIONAL,
//	                     called-presentation-selector  [2] IMPLICIT OCTET STRING OPTIONAL,
//	                     presentation-context-definition-list [4] IMPLICIT SEQUENCE OF
//	                       SEQUENCE { presentation-context-identifier INTEGER,
//	                                  abstract-syntax-name OBJECT IDENTIFIER,
//	                                  transfer-syntax-name-list SEQUENCE OF OBJECT IDENTIFIER },
//	                     user-data User-data OPTIONAL } }
//	CPA-PPDU ::= SET { mode-selector [0] ..., normal-mode-parameters [2] IMPLICIT SEQUENCE {
//	                     responding-presentation-selector [3] IMPLICIT OCTET STRING OPTIONAL,
//	                     presentation-context-definition-result-list [5] IMPLICIT SEQUENCE OF
//	                       SEQUENCE { result [0] IMPLICIT INTEGER,
//	                                  transfer-syntax-name [1] IMPLICIT OBJECT IDENTIFIER OPTIONAL,
//	                                  provider-reason [2] IMPLICIT INTEGER OPTIONAL },
//	                     user-data User-data OPTIONAL } }
//	CPR-PPDU ::= CHOICE { normal-mode-parameters SEQUENCE {
//	                     responding-presentation-selector [3] ..., ...-result-list [5] ...,
//	                     provider-reason [10] IMPLICIT INTEGER OPTIONAL, user-data User-data OPTIONAL } }
//	User-data ::= CHOICE { simply-encoded-data [APPLICATION 0] IMPLICIT OCTET STRING,
//	                       fully-encoded-data [APPLICATION 1] IMPLICIT SEQUENCE OF PDV-list }
//	PDV-list ::= SEQUENCE { transfer-syntax-name OBJECT IDENTIFIER OPTIONAL,
//	                        presentation-context-identifier INTEGER,
//	                        presentation-data-values CHOICE {
//	                          single-ASN1-type [0] ANY, octet-aligned [1] IMPLICIT OCTET STRING,
//	                          arbitrary [2] IMPLICIT BIT STRING } }
//	ARU-PPDU ::= CHOICE { normal-mode-parameters [0] IMPLICIT SEQUENCE {
//	                     presentation-context-identifier-list [0] ... OPTIONAL, user-data OPTIONAL } }
//	ARP-PPDU ::= SEQUENCE { provider-reason [0] IMPLICIT INTEGER OPTIONAL, event-identifier [1] ... OPTIONAL }
//
// A TD PPDU (P-DATA) is just the User-data. With one presentation
// context, one PDV-list and an octet-aligned value, the header in front
// of the value is 61 L (30 L (02 01 ctx) (81 L ...)): 8 octets for
// values up to 127 octets, 12 up to 255, 15 above.

// Presentation tags.
var (
	PresTagCP          = Tag(BERUniversal, true, BERTagSet)
	PresTagModeSel     = Tag(BERContext, true, 0)
	PresTagModeValue   = Tag(BERContext, false, 0)
	PresTagNormal      = Tag(BERContext, true, 2)
	PresTagCalling     = Tag(BERContext, false, 1)
	PresTagCalled      = Tag(BERContext, false, 2)
	PresTagResponding  = Tag(BERContext, false, 3)
	PresTagContextList = Tag(BERContext, true, 4)
	PresTagResultList  = Tag(BERContext, true, 5)
	PresTagCPRReason   = Tag(BERContext, false, 10)
	PresTagSimpleData  = Tag(BERApplication, false, 0)
	PresTagFullData    = Tag(BERApplication, true, 1)
	PresTagSequence    = Tag(BERUniversal, true, BERTagSequence)
	PresTagInteger     = Tag(BERUniversal, false, BERTagInteger)
	PresTagOID         = Tag(BERUniversal, false, BERTagOID)
	PresTagSingleASN1  = Tag(BERContext, true, 0)
	PresTagOctets      = Tag(BERContext, false, 1)
	PresTagArbitrary   = Tag(BERContext, false, 2)
	PresTagResult      = Tag(BERContext, false, 0)
	PresTagResultTS    = Tag(BERContext, false, 1)
	PresTagResultWhy   = Tag(BERContext, false, 2)
	PresTagARU         = Tag(BERContext, true, 0)
	PresTagARPReason   = Tag(BERContext, false, 0)
)

// Presentation values.
const (
	PresModeNormal         = 1
	PresResultAccept       = 0
	PresResultUserReject   = 1
	PresResultProvReject   = 2
	PresReasonNotSpecified = 0
	PresReasonAbstract     = 1 // abstract syntax not supported
	PresReasonTransfer     = 2 // proposed transfer syntaxes not supported
	PresCPRNotSpecified    = 0
	PresCPRAddressUnknown  = 3
	PresARPUnrecognisedPPU = 1
	PresARPUnexpectedPPU   = 2
	PresARPInvalidPPDUParm = 5
)

// PDV kinds.
const (
	PDVSingleASN1 = 0
	PDVOctets     = 1
	PDVArbitrary  = 2
)

// BERTransferSyntax is the basic encoding of a single ASN.1 type
// {joint-iso-itu-t asn1(1) basic-encoding(1)}.
var BERTransferSyntax = OID{2, 1, 1}

// PresContext is one item of a context definition list.
type PresContext struct {
	ID       int64
	Abstract OID
	Transfer []OID
}

// PresCP holds a CP PPDU's fields.
type PresCP struct {
	Calling, Called []byte
	Contexts        []PresContext
	UserData        []byte // an encoded User-data, or nil
}

// PresResult is one item of a context definition result list.
type PresResult struct {
	Result   int64
	Transfer OID   // nil for none
	Reason   int64 // -1 for none
}

// PresCPA holds a CPA (or, with Reason, CPR) PPDU's fields.
type PresCPA struct {
	Responding []byte
	Results    []PresResult
	Reason     int64  // CPR provider reason, -1 for none
	UserData   []byte // an encoded User-data, or nil
}

// PDV is one PDV-list of fully encoded data.
type PDV struct {
	Context int64
	Kind    uint8 // PDVSingleASN1, PDVOctets, PDVArbitrary
	Value   []byte
}

func modeSelector(b []byte) []byte {
	return AppendBER(b, PresTagModeSel, AppendBER(nil, PresTagModeValue, BERInteger(PresModeNormal)))
}

// EncodeCP returns the BER encoding of a CP PPDU (the SET's components
// in tag order, as DER has them).
func EncodeCP(p *PresCP) []byte {
	var n []byte
	if p.Calling != nil {
		n = AppendBER(n, PresTagCalling, p.Calling)
	}
	if p.Called != nil {
		n = AppendBER(n, PresTagCalled, p.Called)
	}
	if len(p.Contexts) > 0 {
		var list []byte
		for _, c := range p.Contexts {
			var ts []byte
			for _, o := range c.Transfer {
				ts = AppendBER(ts, PresTagOID, BEROID(o))
			}
			list = AppendBER(list, PresTagSequence, AppendBER(nil, PresTagInteger, BERInteger(c.ID)),
				AppendBER(nil, PresTagOID, BEROID(c.Abstract)), AppendBER(nil, PresTagSequence, ts))
		}
		n = AppendBER(n, PresTagContextList, list)
	}
	n = append(n, p.UserData...)
	return AppendBER(nil, PresTagCP, modeSelector(nil), AppendBER(nil, PresTagNormal, n))
}

// checkMode reads a mode selector: normal mode only.
func checkMode(e BER) bool {
	in, ok := BERElements(e.Content())
	if !ok || len(in) != 1 || !in[0].Is(PresTagModeValue) {
		return false
	}
	v, ok := ParseBERInteger(in[0].Content())
	return ok && v == PresModeNormal
}

// ParseCP reads a CP PPDU; ok is false for anything but a well-formed
// normal-mode CP.
func ParseCP(b []byte) (p PresCP, ok bool) {
	top := BER(b)
	if !top.IsValid() || !top.Is(PresTagCP) || top.Len() != len(b) {
		return p, false
	}
	parts, ok := BERElements(top.Content())
	if !ok {
		return p, false
	}
	mode, normal := false, false
	for _, e := range parts {
		switch {
		case e.Is(PresTagModeSel):
			mode = checkMode(e)
		case e.Is(PresTagNormal):
			in, ok := BERElements(e.Content())
			if !ok {
				return p, false
			}
			normal = true
			for _, x := range in {
				switch {
				case x.Is(PresTagCalling):
					p.Calling = append([]byte{}, x.Content()...)
				case x.Is(PresTagCalled):
					p.Called = append([]byte{}, x.Content()...)
				case x.Is(PresTagContextList):
					if p.Contexts, ok = parseContexts(x.Content()); !ok {
						return p, false
					}
				case x.Is(PresTagFullData), x.Is(PresTagSimpleData):
					p.UserData = append([]byte{}, x...)
				}
			}
		}
	}
	return p, mode && normal
}

func parseContexts(c []byte) ([]PresContext, bool) {
	items, ok := BERElements(c)
	if !ok {
		return nil, false
	}
	var out []PresContext
	for _, it := range items {
		f, ok := BERElements(it.Content())
		if !ok || !it.Is(PresTagSequence) || len(f) != 3 || !f[0].Is(PresTagInteger) || !f[1].Is(PresTagOID) || !f[2].Is(PresTagSequence) {
			return nil, false
		}
		var pc PresContext
		if pc.ID, ok = ParseBERInteger(f[0].Content()); !ok {
			return nil, false
		}
		if pc.Abstract, ok = ParseBEROID(f[1].Content()); !ok {
			return nil, false
		}
		ts, ok := BERElements(f[2].Content())
		if !ok {
			return nil, false
		}
		for _, x := range ts {
			o, ok := ParseBEROID(x.Content())
			if !ok || !x.Is(PresTagOID) {
				return nil, false
			}
			pc.Transfer = append(pc.Transfer, o)
		}
		out = append(out, pc)
	}
	return out, true
}

func encodeResults(p *PresCPA) []byte {
	var n []byte
	if p.Responding != nil {
		n = AppendBER(n, PresTagResponding, p.Responding)
	}
	if len(p.Results) > 0 {
		var list []byte
		for _, r := range p.Results {
			item := AppendBER(nil, PresTagResult, BERInteger(r.Result))
			if r.Transfer != nil {
				item = AppendBER(item, PresTagResultTS, BEROID(r.Transfer))
			}
			if r.Reason >= 0 {
				item = AppendBER(item, PresTagResultWhy, BERInteger(r.Reason))
			}
			list = AppendBER(list, PresTagSequence, item)
		}
		n = AppendBER(n, PresTagResultList, list)
	}
	return n
}

// EncodeCPA returns the BER encoding of a CPA PPDU.
func EncodeCPA(p *PresCPA) []byte {
	n := append(encodeResults(p), p.UserData...)
	return AppendBER(nil, PresTagCP, modeSelector(nil), AppendBER(nil, PresTagNormal, n))
}

// EncodeCPR returns the BER encoding of a CPR PPDU (normal mode).
func EncodeCPR(p *PresCPA) []byte {
	n := encodeResults(p)
	if p.Reason >= 0 {
		n = AppendBER(n, PresTagCPRReason, BERInteger(p.Reason))
	}
	n = append(n, p.UserData...)
	return AppendBER(nil, PresTagSequence, n)
}

func parseResultFields(in []BER, p *PresCPA, cpr bool) bool {
	for _, x := range in {
		switch {
		case x.Is(PresTagResponding):
			p.Responding = append([]byte{}, x.Content()...)
		case x.Is(PresTagResultList):
			items, ok := BERElements(x.Content())
			if !ok {
				return false
			}
			p.Results = nil
			for _, it := range items {
				f, ok := BERElements(it.Content())
				if !ok || !it.Is(PresTagSequence) || len(f) == 0 || !f[0].Is(PresTagResult) {
					return false
				}
				r := PresResult{Reason: -1}
				if r.Result, ok = ParseBERInteger(f[0].Content()); !ok {
					return false
				}
				for _, y := range f[1:] {
					switch {
					case y.Is(PresTagResultTS):
						if r.Transfer, ok = ParseBEROID(y.Content()); !ok {
							return false
						}
					case y.Is(PresTagResultWhy):
						if r.Reason, ok = ParseBERInteger(y.Content()); !ok {
							return false
						}
					default:
						return false
					}
				}
				p.Results = append(p.Results, r)
			}
		case cpr && x.Is(PresTagCPRReason):
			v, ok := ParseBERInteger(x.Content())
			if !ok {
				return false
			}
			p.Reason = v
		case x.Is(PresTagFullData), x.Is(PresTagSimpleData):
			p.UserData = append([]byte{}, x...)
		}
	}
	return true
}

// ParseCPA reads a CPA PPDU.
func ParseCPA(b []byte) (p PresCPA, ok bool) {
	p.Reason = -1
	top := BER(b)
	if !top.IsValid() || !top.Is(PresTagCP) || top.Len() != len(b) {
		return p, false
	}
	parts, ok := BERElements(top.Content())
	if !ok {
		return p, false
	}
	mode, normal := false, false
	for _, e := range parts {
		switch {
		case e.Is(PresTagModeSel):
			mode = checkMode(e)
		case e.Is(PresTagNormal):
			in, ok := BERElements(e.Content())
			if !ok || !parseResultFields(in, &p, false) {
				return p, false
			}
			normal = true
		}
	}
	return p, mode && normal
}

// ParseCPR reads a CPR PPDU (normal mode).
func ParseCPR(b []byte) (p PresCPA, ok bool) {
	p.Reason = -1
	top := BER(b)
	if !top.IsValid() || !top.Is(PresTagSequence) || top.Len() != len(b) {
		return p, false
	}
	in, ok := BERElements(top.Content())
	if !ok || !parseResultFields(in, &p, true) {
		return p, false
	}
	return p, true
}

// EncodeUserData returns fully encoded data holding pdvs.
func EncodeUserData(pdvs []PDV) []byte {
	var list []byte
	for _, d := range pdvs {
		list = append(list, pdvHeader(nil, d.Context, d.Kind, len(d.Value))...)
		list = append(list, d.Value...)
	}
	return AppendBER(nil, PresTagFullData, list)
}

func pdvValueTag(kind uint8) BERTag {
	switch kind {
	case PDVSingleASN1:
		return PresTagSingleASN1
	case PDVArbitrary:
		return PresTagArbitrary
	}
	return PresTagOctets
}

// pdvHeader appends a PDV-list's octets up to its value's n octets.
func pdvHeader(b []byte, ctx int64, kind uint8, n int) []byte {
	id := AppendBER(nil, PresTagInteger, BERInteger(ctx))
	vt := pdvValueTag(kind)
	b = AppendBERHeader(b, PresTagSequence, len(id)+BERHeaderLen(vt, n)+n)
	b = append(b, id...)
	return AppendBERHeader(b, vt, n)
}

// PresDataHeader appends the octets of a TD PPDU (fully encoded data, one
// PDV-list of context ctx, an octet-aligned value) up to the value of n
// octets, which follows: a presentation entity chains the header in
// front of the user's data.
func PresDataHeader(b []byte, ctx int64, n int) []byte {
	pdv := pdvHeader(nil, ctx, PDVOctets, n)
	b = AppendBERHeader(b, PresTagFullData, len(pdv)+n)
	return append(b, pdv...)
}

// PresDataHeaderLen returns len(PresDataHeader(nil, ctx, n)).
func PresDataHeaderLen(ctx int64, n int) int {
	id := 2 + berIntLen(ctx)
	vh := BERHeaderLen(PresTagOctets, n)
	seq := id + vh + n
	seqH := BERHeaderLen(PresTagSequence, seq)
	return BERHeaderLen(PresTagFullData, seqH+seq) + seqH + id + vh
}

// berIntLen is len(BERInteger(v)).
func berIntLen(v int64) int {
	n := 1
	for (v >= 0x80 || v < -0x80) && n < 8 {
		v >>= 8
		n++
	}
	return n
}

// ParseUserData reads an encoded User-data: fully encoded data as its
// PDV-lists (values aliasing b), or simply encoded data as one octet
// string of context 0. ok is false unless b is exactly one well-formed
// User-data.
func ParseUserData(b []byte) ([]PDV, bool) {
	top := BER(b)
	if !top.IsValid() || top.Len() != len(b) {
		return nil, false
	}
	if top.Is(PresTagSimpleData) {
		return []PDV{{Kind: PDVOctets, Value: top.Content()}}, true
	}
	if !top.Is(PresTagFullData) {
		return nil, false
	}
	lists, ok := BERElements(top.Content())
	if !ok || len(lists) == 0 {
		return nil, false
	}
	var out []PDV
	for _, l := range lists {
		f, ok := BERElements(l.Content())
		if !ok || !l.Is(PresTagSequence) || len(f) < 2 {
			return nil, false
		}
		if f[0].Is(PresTagOID) {
			f = f[1:] // a transfer syntax name
		}
		if len(f) != 2 || !f[0].Is(PresTagInteger) {
			return nil, false
		}
		var d PDV
		if d.Context, ok = ParseBERInteger(f[0].Content()); !ok {
			return nil, false
		}
		switch {
		case f[1].Is(PresTagSingleASN1):
			d.Kind = PDVSingleASN1
		case f[1].Is(PresTagOctets):
			d.Kind = PDVOctets
		case f[1].Is(PresTagArbitrary):
			d.Kind = PDVArbitrary
		default:
			return nil, false
		}
		d.Value = f[1].Content()
		out = append(out, d)
	}
	return out, true
}

// EncodeARU returns an ARU PPDU (normal mode) with optional user data.
func EncodeARU(userData []byte) []byte { return AppendBER(nil, PresTagARU, userData) }

// EncodeARP returns an ARP PPDU with a provider reason.
func EncodeARP(reason int64) []byte {
	return AppendBER(nil, PresTagSequence, AppendBER(nil, PresTagARPReason, BERInteger(reason)))
}

// ParsePresDataHeader reads the header of a TD PPDU of total octets from
// its first octets b: fully encoded data holding exactly one PDV-list
// with a context identifier and an octet-aligned value that ends the
// PPDU. It returns the context, the header's length and the value's;
// ok is false for anything else (which ParseUserData may still read).
func ParsePresDataHeader(b []byte, total int) (ctx int64, hl, n int, ok bool) {
	t, h1, l1, ok := berHeader(b)
	if !ok || t != PresTagFullData || h1+l1 != total {
		return 0, 0, 0, false
	}
	off := h1
	t, h2, l2, ok := berHeader(b[off:])
	if !ok || t != PresTagSequence || h2+l2 != l1 {
		return 0, 0, 0, false
	}
	off += h2
	t, h3, l3, ok := berHeader(b[off:])
	if !ok || t != PresTagInteger || off+h3+l3 > len(b) {
		return 0, 0, 0, false
	}
	if ctx, ok = ParseBERInteger(b[off+h3 : off+h3+l3]); !ok {
		return 0, 0, 0, false
	}
	off += h3 + l3
	t, h4, l4, ok := berHeader(b[off:])
	if !ok || t != PresTagOctets || h3+l3+h4+l4 != l2 || off+h4+l4 != total {
		return 0, 0, 0, false
	}
	return ctx, off + h4, l4, true
}
