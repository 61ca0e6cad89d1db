package wire

import "encoding/binary"

// The one reader of protobuf's wire format that every decoder here
// builds on; it calls nothing else in the package.

// field reads the field starting at msg[i]: its number, its payload when
// length-delimited (non-nil, possibly empty), and where the next begins.
func field(msg []byte, i int) (num uint64, payload []byte, next int, err error) {
	// Most fields of Kubernetes objects are length-delimited, numbered
	// below 16 and shorter than 128 bytes: a one-byte tag and a one-byte
	// length, read here without binary.Uvarint's loop (about a third of
	// the calls' cost, callgrind of BenchmarkEventsStoredVersion).
	if j := i + 2; j <= len(msg) && msg[i]&0x87 == 2 && msg[i] > 7 && msg[i+1] < 0x80 {
		if l := int(msg[i+1]); l <= len(msg)-j {
			return uint64(msg[i] >> 3), msg[j : j+l : j+l], j + l, nil
		}
	}
	tag, n := binary.Uvarint(msg[i:])
	if n <= 0 {
		return 0, nil, 0, errMalformed
	}
	i += n
	num = tag >> 3
	if num == 0 { // illegal in protobuf: the stock decoders refuse it
		return 0, nil, 0, errMalformed
	}
	switch tag & 7 {
	case 0: // varint
		_, n := binary.Uvarint(msg[i:])
		if n <= 0 {
			return 0, nil, 0, errMalformed
		}
		return num, nil, i + n, nil
	case 1: // fixed64
		if len(msg)-i < 8 {
			return 0, nil, 0, errMalformed
		}
		return num, nil, i + 8, nil
	case 2: // length-delimited
		l, n := binary.Uvarint(msg[i:])
		if n <= 0 || l > uint64(len(msg)-i-n) {
			return 0, nil, 0, errMalformed
		}
		i += n
		return num, msg[i : i+int(l) : i+int(l)], i + int(l), nil
	case 5: // fixed32
		if len(msg)-i < 4 {
			return 0, nil, 0, errMalformed
		}
		return num, nil, i + 4, nil
	case 3: // a group (deprecated), skipped to its end as the generated decoders do
		for i < len(msg) {
			t, n := binary.Uvarint(msg[i:])
			if n <= 0 {
				return 0, nil, 0, errMalformed
			}
			if t&7 == 4 {
				return num, nil, i + n, nil
			}
			_, _, next, err := field(msg, i)
			if err != nil {
				return 0, nil, 0, err
			}
			i = next
		}
	}
	return 0, nil, 0, errMalformed
}
