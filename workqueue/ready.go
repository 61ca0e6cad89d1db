package workqueue

// Ready keys live in FIFO buckets, one per priority in use, linked through
// their entries. With a FairnessKey, each bucket also keeps one FIFO per
// group and serves the groups round-robin.

// maxIdleBuckets bounds the buckets kept while empty.
const maxIdleBuckets = 8

type bucket struct {
	prio   int
	list   // arrival order, oldest first, by chain byArrival
	n      int
	groups map[string]int32 // fairness groups by name
	rr     ring             // groups in round-robin order; empty ones lazily dropped
}

type group struct {
	name string
	list // arrival order, oldest first, by chain byGroup
	n    int
}

type readySet struct {
	buckets  []bucket // slab
	order    []int32  // buckets in use, highest priority first
	freeB    []int32
	groups   []group // slab
	freeG    []int32
	nready   int
	nonEmpty int // buckets with keys
}

func (r *readySet) reset() {
	r.buckets, r.order, r.freeB = r.buckets[:0], r.order[:0], r.freeB[:0]
	r.groups, r.freeG = r.groups[:0], r.freeG[:0]
	r.nready, r.nonEmpty = 0, 0
}

// bucketFor returns the bucket of prio, creating it in order.
func (r *readySet) bucketFor(prio int) int32 {
	i := 0
	for ; i < len(r.order); i++ {
		p := r.buckets[r.order[i]].prio
		if p == prio {
			return r.order[i]
		}
		if p < prio {
			break
		}
	}
	var b int32
	if n := len(r.freeB); n > 0 {
		b = r.freeB[n-1]
		r.freeB = r.freeB[:n-1]
	} else {
		r.buckets = append(r.buckets, bucket{})
		b = int32(len(r.buckets) - 1)
	}
	r.buckets[b] = bucket{prio: prio, list: emptyList}
	r.order = append(r.order, 0)
	copy(r.order[i+1:], r.order[i:])
	r.order[i] = b
	return b
}

// dropIfIdle forgets an empty bucket when too many are kept.
func (r *readySet) dropIfIdle(b int32) {
	if len(r.order) <= maxIdleBuckets {
		return
	}
	bk := &r.buckets[b]
	for bk.rr.n > 0 {
		r.freeGroup(bk, bk.rr.pop())
	}
	for i, o := range r.order {
		if o == b {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	r.buckets[b] = bucket{}
	r.freeB = append(r.freeB, b)
}

func (r *readySet) freeGroup(bk *bucket, g int32) {
	delete(bk.groups, r.groups[g].name)
	r.groups[g] = group{}
	r.freeG = append(r.freeG, g)
}

// pushReady appends a key to the bucket of its priority.
func (q *Queue[K]) pushReady(id int32) {
	b := q.bucketFor(q.at(id).prio)
	bk := &q.buckets[b]
	e := q.at(id)
	e.flags |= fReady
	e.bucket = b
	q.pushBack(&bk.list, byArrival, id)
	if bk.n == 0 {
		q.nonEmpty++
	}
	bk.n++
	q.nready++
	if q.fairKey != nil {
		q.pushGroup(bk, id)
	}
}

// pushGroup appends a ready key to its fairness group in bk.
func (q *Queue[K]) pushGroup(bk *bucket, id int32) {
	e := q.at(id)
	name := q.fairKey(e.key)
	g, ok := bk.groups[name]
	if !ok {
		if n := len(q.freeG); n > 0 {
			g = q.freeG[n-1]
			q.freeG = q.freeG[:n-1]
		} else {
			q.groups = append(q.groups, group{})
			g = int32(len(q.groups) - 1)
		}
		q.groups[g] = group{name: name, list: emptyList}
		if bk.groups == nil {
			bk.groups = make(map[string]int32)
		}
		bk.groups[name] = g
		bk.rr.push(g)
	}
	gr := &q.groups[g]
	e.group = g
	q.pushBack(&gr.list, byGroup, id)
	gr.n++
}

// unlinkReady removes a ready key from its bucket and group.
func (q *Queue[K]) unlinkReady(id int32) {
	e := q.at(id)
	bk := &q.buckets[e.bucket]
	q.unlink(&bk.list, byArrival, id)
	if e.group != none {
		gr := &q.groups[e.group]
		q.unlink(&gr.list, byGroup, id)
		gr.n--
		e.group = none
	}
	e.flags &^= fReady
	b := e.bucket
	e.bucket = none
	bk.n--
	q.nready--
	if bk.n == 0 {
		q.nonEmpty--
		q.dropIfIdle(b)
	}
}

// popReady removes and returns the key to hand out next: the head of the
// highest non-empty bucket (round-robin over its groups with fairness),
// unless a lower bucket's head has waited AgeAfter and is older.
func (q *Queue[K]) popReady() int32 {
	i := 0
	for q.buckets[q.order[i]].n == 0 {
		i++
	}
	top := &q.buckets[q.order[i]]
	if q.nonEmpty > 1 && q.ageAfter > 0 && q.stamp {
		oldest := top.head
		limit := q.now() - q.ageAfter
		for _, b := range q.order[i+1:] {
			bk := &q.buckets[b]
			if bk.n == 0 {
				continue
			}
			at := q.at(bk.head).enqueued
			if at <= limit && at < q.at(oldest).enqueued {
				oldest = bk.head
			}
		}
		if oldest != top.head {
			q.unlinkReady(oldest)
			return oldest
		}
	}
	id := top.head
	if q.fairKey != nil {
		id = q.nextInRoundRobin(top)
	}
	q.unlinkReady(id)
	return id
}

// nextInRoundRobin returns the head of the next non-empty group of bk and
// moves that group to the back of the round.
func (q *Queue[K]) nextInRoundRobin(bk *bucket) int32 {
	for {
		g := bk.rr.pop()
		if q.groups[g].n == 0 {
			q.freeGroup(bk, g)
			continue
		}
		bk.rr.push(g)
		return q.groups[g].head
	}
}

// ring is a FIFO of int32 in a power-of-two circular buffer.
type ring struct {
	buf  []int32
	head int
	n    int
}

func (r *ring) push(v int32) {
	if r.n == len(r.buf) {
		nb := make([]int32, max(8, 2*len(r.buf)))
		for i := range r.n {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring) pop() int32 {
	v := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}
