package workqueue

// The state of every key lives in a slot of a slab, numbered from 0 and
// linked by number: the index maps a key to its slot, and the lists of
// keys (a bucket's ready keys, a fairness group's, the keys in flight, the
// retired keys) chain slots through links in the slots themselves. Nothing
// here knows what a key's state means; core.go does.

// chunkSize is the number of key slots in a chunk of the slab. The slab
// grows by chunks, never copying a slot: grown as one slice (by a quarter
// at a time, past 256 slots), the 100k keys of a cold start's initial list
// copied about 5 times their 9.6 MB, under the garbage collector's write
// barriers (BenchmarkBurstDrain, add-ns/key). The first chunk grows as a
// slice up to chunkSize, so that a small queue stays small.
const (
	chunkShift = 10
	chunkSize  = 1 << chunkShift
)

// firstChunk is the capacity the first chunk starts with; it doubles up
// to chunkSize (append's own growth would pass it for some entry sizes).
const firstChunk = 8

// slab holds the slots of a queue's keys. A slot is in use, or free: a
// free slot is zero but for links[byArrival].next, which chains the free
// slots, most recently freed first.
type slab[K comparable] struct {
	chunks [][]entry[K] // by chunks of chunkSize
	slots  int32        // slots made so far, in use or free
	free   int32        // the first free slot, or none
}

// at returns slot id.
func (s *slab[K]) at(id int32) *entry[K] {
	return &s.chunks[id>>chunkShift][id&(chunkSize-1)]
}

// newSlot returns a free slot, making one if none is free. Its contents
// are the caller's to set.
func (s *slab[K]) newSlot() int32 {
	if id := s.free; id != none {
		s.free = s.at(id).links[byArrival].next
		return id
	}
	id := s.slots
	if c := int(id >> chunkShift); c < len(s.chunks) {
		ch := s.chunks[c]
		if len(ch) == cap(ch) { // the first chunk: double it, up to chunkSize
			grown := make([]entry[K], len(ch), min(2*cap(ch), chunkSize))
			copy(grown, ch)
			ch = grown
		}
		s.chunks[c] = append(ch, entry[K]{})
	} else {
		n := chunkSize
		if c == 0 {
			n = firstChunk // grown by append, up to chunkSize
		}
		s.chunks = append(s.chunks, make([]entry[K], 1, n))
	}
	s.slots++
	return id
}

// freeSlot zeroes slot id and makes it the first free slot.
func (s *slab[K]) freeSlot(id int32) {
	*s.at(id) = entry[K]{}
	s.at(id).links[byArrival].next = s.free
	s.free = id
}

// dropAll lets go of every slot.
func (s *slab[K]) dropAll() {
	s.chunks, s.slots, s.free = nil, 0, none
}

// link is a slot's place in one list: the slots before and after it, or
// none.
type link struct{ prev, next int32 }

// chain names one of a slot's two links. A slot is on at most one list
// of each chain at a time.
type chain uint8

const (
	byArrival chain = iota // a bucket's ready keys, the keys in flight or the retired keys
	byGroup                // a fairness group's ready keys
	chains
)

// list is a doubly linked list of slots, in the order they were pushed.
type list struct{ head, tail int32 }

// emptyList is a list of no slot.
var emptyList = list{head: none, tail: none}

// pushBack appends slot id to l, linked by chain c.
func (s *slab[K]) pushBack(l *list, c chain, id int32) {
	ln := &s.at(id).links[c%chains]
	ln.prev, ln.next = l.tail, none
	if l.tail != none {
		s.at(l.tail).links[c%chains].next = id
	} else {
		l.head = id
	}
	l.tail = id
}

// unlink removes slot id from l, linked by chain c.
func (s *slab[K]) unlink(l *list, c chain, id int32) {
	ln := &s.at(id).links[c%chains]
	if ln.prev != none {
		s.at(ln.prev).links[c%chains].next = ln.next
	} else {
		l.head = ln.next
	}
	if ln.next != none {
		s.at(ln.next).links[c%chains].prev = ln.prev
	} else {
		l.tail = ln.prev
	}
	ln.prev, ln.next = none, none
}

// next returns the slot after id on its list of chain c, or none.
func (s *slab[K]) next(c chain, id int32) int32 { return s.at(id).links[c%chains].next }
