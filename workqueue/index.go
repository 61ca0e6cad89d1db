package workqueue

import (
	"hash/maphash"
	"math/bits"
)

// The index maps a key to its slot in the slab. It is an open-addressing
// table with linear probing over one []uint64, a word per cell: the upper
// 32 bits of the key's hash (its tag) and the slot number plus one; 0 is an
// empty cell. The tag also picks the key's home cell (its top bits), so
// growing and deleting move cells without reading a key, and a slot keeps
// its tag (entry.tag) so that releasing it hashes nothing.
//
// Why not a Go map: a queue's life is an add of a new key (a lookup, then
// an insert), a few duplicate adds (lookups) and, later, a delete. A map
// hashes the key for each (the three strings of a reconcile.Request), and
// in a large queue each lands on a cold group of 8 slots of 56 bytes. Here
// the key is hashed once per Add, a probe reads 8-byte cells (8 to a cache
// line), and a delete hashes nothing. bench/workqueue's BenchmarkQueue
// (dup50_p1w1, metrics on) measured the difference; BENCHMARKS-perf.md
// has the figures.
//
// Invariants (checkLocked tests them): n cells are full, each names a slot
// in use whose tag it holds, once; every full cell is reachable from its
// key's home by a run of full cells (no empty cell between), which is what
// deletion by backward shift keeps true; the table is at most maxLoad full.
type index struct {
	cells []uint64 // len a power of two, or 0
	shift uint8    // 32 - log2(len(cells)): tag >> shift is the home cell
	n     int      // full cells
	seed  maphash.Seed
}

// minCells is the size of a table's first allocation.
const minCells = 16

// maxLoad: the table grows when an insert would fill more than 3/4 of it.
const maxLoadNum, maxLoadDen = 3, 4

// newIndex returns an empty index with a seed of its own.
func newIndex() index { return index{seed: maphash.MakeSeed()} }

// hasherOf returns the hash function of the index of a queue of keys of
// type K: h, else maphash.String when K is string, else maphash.Comparable.
func hasherOf[K comparable](h func(K, maphash.Seed) uint64) func(K, maphash.Seed) uint64 {
	if h != nil {
		return h
	}
	if f, ok := any(hashString).(func(K, maphash.Seed) uint64); ok {
		return f
	}
	return func(key K, seed maphash.Seed) uint64 { return maphash.Comparable(seed, key) }
}

func hashString(s string, seed maphash.Seed) uint64 { return maphash.String(seed, s) }

// tagOf returns the tag of key: the upper half of its hash. It reads only
// fields New set (the seed and the hash function), so it runs without the
// queue's lock.
func (q *Queue[K]) tagOf(key K) uint32 { return uint32(q.hash(key, q.index.seed) >> 32) }

// cell packs a tag and a slot number.
func cell(tag uint32, id int32) uint64 { return uint64(tag)<<32 | uint64(uint32(id)+1) }

// cellID returns the slot number of a full cell.
func cellID(c uint64) int32 { return int32(uint32(c) - 1) }

// home returns the cell a tag hashes to.
func (x *index) home(tag uint32) int { return int(tag >> x.shift) }

// lookup returns the slot of key, or none; tag is key's tag. Only the
// slots of cells whose tag matches are read, to compare their key.
func lookup[K comparable](x *index, s *slab[K], key K, tag uint32) int32 {
	if x.n == 0 {
		return none
	}
	mask := len(x.cells) - 1
	for i := x.home(tag); ; i = (i + 1) & mask {
		c := x.cells[i]
		if c == 0 {
			return none
		}
		if uint32(c>>32) == tag {
			if id := cellID(c); s.at(id).key == key {
				return id
			}
		}
	}
}

// insert adds slot id, whose key has tag and is not in the index.
func (x *index) insert(tag uint32, id int32) {
	if (x.n+1)*maxLoadDen > len(x.cells)*maxLoadNum {
		x.resize(max(2*len(x.cells), minCells))
	}
	x.place(cell(tag, id))
	x.n++
}

// place puts a full cell in the first empty cell of its probe run.
func (x *index) place(c uint64) {
	mask := len(x.cells) - 1
	i := x.home(uint32(c >> 32))
	for x.cells[i] != 0 {
		i = (i + 1) & mask
	}
	x.cells[i] = c
}

// remove deletes slot id, whose key has tag. The cells after it in its run
// move back over the hole when their home allows (backward shift), so no
// tombstone is left and lookups stay as short as after inserts alone. A
// slot the index does not hold is left alone, as a map's delete does.
func (x *index) remove(tag uint32, id int32) {
	if x.n == 0 {
		return
	}
	mask := len(x.cells) - 1
	want := cell(tag, id)
	i := x.home(tag)
	for x.cells[i] != want {
		if x.cells[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; x.cells[j] != 0; j = (j + 1) & mask {
		// The cell at j may fill the hole at i unless its home lies
		// cyclically in (i, j]: then it would become unreachable.
		if h := x.home(uint32(x.cells[j] >> 32)); (j-h)&mask >= (j-i)&mask {
			x.cells[i] = x.cells[j]
			i = j
		}
	}
	x.cells[i] = 0
	x.n--
}

// reserve makes room for n keys without a resize.
func (x *index) reserve(n int) {
	need := (n*maxLoadDen + maxLoadNum - 1) / maxLoadNum
	if need > len(x.cells) {
		x.resize(max(1<<bits.Len(uint(need-1)), minCells))
	}
}

// resize moves every cell into a table of size cells (a power of two).
func (x *index) resize(size int) {
	old := x.cells
	x.cells = make([]uint64, size)
	x.shift = uint8(32 - bits.TrailingZeros(uint(size)))
	for _, c := range old {
		if c != 0 {
			x.place(c)
		}
	}
}

// reset empties the index and lets go of its table.
func (x *index) reset() { x.cells, x.shift, x.n = nil, 0, 0 }
