package ranges

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Segments is the number of segments of the hash space: a prime (Maglev's
// table size must be one) a little below 2^7, so that a Set fits in 128
// bits and a shard of a small ring has few ranges to name.
const Segments = 127

// Top is the exclusive upper bound of the hash space as the API server
// writes it (2^64).
const Top = "0x10000000000000000"

// Set is a set of segments; the zero value is empty.
type Set struct{ lo, hi uint64 }

// All returns the set of every segment.
func All() Set {
	var s Set
	for k := range Segments {
		s = s.With(k)
	}
	return s
}

// Has reports whether s holds segment k.
func (s Set) Has(k int) bool {
	if k < 0 || k >= Segments {
		return false
	}
	if k < 64 {
		return s.lo&(1<<k) != 0
	}
	return s.hi&(1<<(k-64)) != 0
}

// With returns s with segment k added (k outside [0, Segments) is
// ignored).
func (s Set) With(k int) Set {
	switch {
	case k < 0 || k >= Segments:
	case k < 64:
		s.lo |= 1 << k
	default:
		s.hi |= 1 << (k - 64)
	}
	return s
}

// Union returns the segments of s or o.
func (s Set) Union(o Set) Set { return Set{s.lo | o.lo, s.hi | o.hi} }

// Intersect returns the segments of both s and o.
func (s Set) Intersect(o Set) Set { return Set{s.lo & o.lo, s.hi & o.hi} }

// Minus returns the segments of s that o does not hold.
func (s Set) Minus(o Set) Set { return Set{s.lo &^ o.lo, s.hi &^ o.hi} }

// Empty reports whether s holds no segment.
func (s Set) Empty() bool { return s.lo == 0 && s.hi == 0 }

// Len returns the number of segments of s.
func (s Set) Len() int { return bits.OnesCount64(s.lo) + bits.OnesCount64(s.hi) }

// Segments returns the segments of s in increasing order.
func (s Set) Segments() []int {
	var out []int
	for k := range Segments {
		if s.Has(k) {
			out = append(out, k)
		}
	}
	return out
}

// HasHash reports whether s holds the segment of hash.
func (s Set) HasHash(hash uint64) bool { return s.Has(Of(hash)) }

// String lists s as runs of segments, for logs: "0-41,84-126".
func (s Set) String() string {
	var parts []string
	for _, r := range s.runs() {
		if r[0] == r[1]-1 {
			parts = append(parts, strconv.Itoa(r[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r[0], r[1]-1))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// runs returns the maximal runs [from, to) of consecutive segments of s.
func (s Set) runs() [][2]int {
	var out [][2]int
	for k := 0; k < Segments; k++ {
		if !s.Has(k) {
			continue
		}
		from := k
		for k < Segments && s.Has(k) {
			k++
		}
		out = append(out, [2]int{from, k})
	}
	return out
}

// Start returns the first hash of segment k (0 <= k < Segments), and
// false with k == Segments (the top, 2^64, which no uint64 holds).
func Start(k int) (uint64, bool) {
	if k <= 0 {
		return 0, true
	}
	if k >= Segments {
		return 0, false
	}
	q, r := bits.Div64(uint64(k), 0, Segments) // k*2^64 / Segments
	if r != 0 {
		q++
	}
	return q, true
}

// Of returns the segment of hash: the k with Start(k) <= hash < Start(k+1).
func Of(hash uint64) int {
	hi, _ := bits.Mul64(hash, Segments)
	return int(hi)
}

// Hash is the API server's hash of a field's value: 64-bit FNV-1a.
func Hash(value string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(value))
	return h.Sum64()
}

// bound formats the start of segment k as the API server wants it: 0x and
// 16 lower-case hex digits, or Top.
func bound(k int) string {
	v, ok := Start(k)
	if !ok {
		return Top
	}
	return fmt.Sprintf("0x%016x", v)
}

// Selector returns the shardSelector that matches the objects whose field
// (object.metadata.uid or object.metadata.namespace) hashes into s: one
// shardRange per run of consecutive segments, joined by ||. An empty s
// has no selector that matches nothing; it returns the one-hash range
// [0, 1), which the caller must filter out itself (see Set.HasHash).
func Selector(field string, s Set) string {
	runs := s.runs()
	if len(runs) == 0 {
		return fmt.Sprintf("shardRange(%s, '0x%016x', '0x%016x')", field, 0, 1)
	}
	var b strings.Builder
	for i, r := range runs {
		if i > 0 {
			b.WriteString(" || ")
		}
		fmt.Fprintf(&b, "shardRange(%s, '%s', '%s')", field, bound(r[0]), bound(r[1]))
	}
	return b.String()
}

// Assign gives every segment to one of shards with Maglev's population:
// each shard walks its own permutation of the segments (offset and skip
// from two hashes of its name) and the shards take turns claiming their
// next free segment. It returns nil for no shards.
func Assign(shards []string) map[string]Set {
	names := slices.Clone(shards)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil
	}
	type perm struct{ offset, skip, next uint64 }
	perms := make([]perm, len(names))
	for i, n := range names {
		perms[i] = perm{offset: Hash("offset/"+n) % Segments, skip: Hash("skip/"+n)%(Segments-1) + 1}
	}
	var owner [Segments]int
	for k := range owner {
		owner[k] = -1
	}
	out := make(map[string]Set, len(names))
	for filled := 0; filled < Segments; {
		for i := range names {
			p := &perms[i]
			k := (p.offset + p.next*p.skip) % Segments
			for owner[k] >= 0 {
				p.next++
				k = (p.offset + p.next*p.skip) % Segments
			}
			owner[k] = i
			p.next++
			out[names[i]] = out[names[i]].With(int(k))
			if filled++; filled == Segments {
				break
			}
		}
	}
	return out
}

// The codec: "v1/127/" and the set's 128 bits as 32 hex digits, high
// first. The version and segment count let a later layout be told apart.
const codecPrefix = "v1/127/"

// ErrCodec is wrapped by Parse's errors.
var ErrCodec = errors.New("ranges: not a segment set")

// Format encodes s for a Lease annotation (39 bytes).
func Format(s Set) string { return fmt.Sprintf("%s%016x%016x", codecPrefix, s.hi, s.lo) }

// Parse decodes Format's text.
func Parse(text string) (Set, error) {
	rest, ok := strings.CutPrefix(text, codecPrefix)
	if !ok {
		return Set{}, fmt.Errorf("%w: %q does not start with %q", ErrCodec, text, codecPrefix)
	}
	if len(rest) != 32 {
		return Set{}, fmt.Errorf("%w: %q: want 32 hex digits after %q", ErrCodec, text, codecPrefix)
	}
	var words [2]uint64
	for i := range words {
		part := rest[16*i : 16*(i+1)]
		for _, c := range part {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return Set{}, fmt.Errorf("%w: %q: %q is not a lower-case hex digit", ErrCodec, text, c)
			}
		}
		v, err := strconv.ParseUint(part, 16, 64)
		if err != nil {
			return Set{}, fmt.Errorf("%w: %q: %w", ErrCodec, text, err)
		}
		words[i] = v
	}
	s := Set{hi: words[0], lo: words[1]}
	if s.hi>>(Segments-64) != 0 {
		return Set{}, fmt.Errorf("%w: %q names segments past %d", ErrCodec, text, Segments-1)
	}
	return s, nil
}
