//go:build !kubeloop_maptable

package store

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"unsafe"
)

// nameTable holds the objects of one namespace by name. It is an open
// addressing hash table laid out for a Get on a large cache, where the
// time goes into cache misses rather than instructions:
//
//   - Slots sit in groups of four that fill one 64-byte cache line: four
//     tags (32 bits of each name's hash), four name references and four
//     object pointers. A lookup usually reads one group and compares tags
//     without touching a name. The pointers are untyped (objectStore
//     knows the one Go type it holds), which keeps a group to one line.
//   - The names themselves are copied into one byte slice per table, so
//     the single name compare of a hit reads a small, dense array rather
//     than the object's own name string, which lives wherever its decoder
//     allocated it. With a Go map keyed by that string, a lookup on a
//     100k-object cache waited on three scattered reads (the map group, the
//     key's bytes, then the object); here it waits on two small ones.
//
// Deleted slots become tombstones until the next rebuild; deleted names
// stay in the byte slice until then too. Rebuilds happen when slots run
// short, when the table is mostly empty, or when most of the name bytes
// are garbage, so memory stays proportional to the live objects.
//
// What it buys is measured by bench/cache BenchmarkStoreFloor run with and
// without -tags kubeloop_maptable (a plain Go map, table_map.go): on 100k
// ConfigMaps read in scattered order, client.GetShared took 130 ns of CPU
// per read with this table and 286 ns with the map (BENCHMARKS.md, "store:
// table or map"). Keep it only while that holds.
//
// A nameTable is not safe for concurrent use; Store guards it.
type nameTable struct {
	seed    maphash.Seed
	groups  []nameGroup
	names   []byte // uvarint-length-prefixed names; bytes once written never change
	live    int    // slots holding an object
	used    int    // slots holding an object or a tombstone
	garbage int    // bytes of names whose slot was deleted
}

// groupSlots is the number of slots in a nameGroup.
const groupSlots = 4

type nameGroup struct {
	tags [groupSlots]uint32 // tagEmpty, tagDeleted, or tagOf(the name's hash)
	refs [groupSlots]uint32 // offset of the slot's name in names
	objs [groupSlots]unsafe.Pointer
}

const (
	tagEmpty   = 0
	tagDeleted = 1
)

// tagOf returns the tag of a name's hash: its high 32 bits, never
// tagEmpty or tagDeleted.
func tagOf(h uint64) uint32 { return uint32(h>>32) | 2 }

// newNameTable returns a table sized for n objects.
func newNameTable(seed maphash.Seed, n int) *nameTable {
	return &nameTable{seed: seed, groups: make([]nameGroup, groupsFor(n))}
}

// groupsFor returns the number of groups that hold n objects at half load.
func groupsFor(n int) int { return max(1, (2*n+groupSlots-1)/groupSlots) }

// home returns the group where the probe for a name with hash h starts.
func (t *nameTable) home(h uint64) int {
	return int((uint64(uint32(h)) * uint64(len(t.groups))) >> 32)
}

// nameAt returns the name stored at ref. The string shares the table's
// bytes, which are never overwritten.
func (t *nameTable) nameAt(ref uint32) string {
	n, w := binary.Uvarint(t.names[ref:])
	if n == 0 {
		return ""
	}
	return unsafe.String(&t.names[int(ref)+w], int(n))
}

// len returns the number of objects; a nil table has none.
func (t *nameTable) len() int {
	if t == nil {
		return 0
	}
	return t.live
}

// get returns the object named name; a nil table has none.
func (t *nameTable) get(name string) (unsafe.Pointer, bool) {
	if t == nil {
		return nil, false
	}
	if grp, j, _ := t.find(name); grp != nil {
		return grp.objs[j], true
	}
	return nil, false
}

// find returns the group and slot holding name, or a nil group, and the
// name's hash.
func (t *nameTable) find(name string) (grp *nameGroup, j int, h uint64) {
	h = maphash.String(t.seed, name)
	tag := tagOf(h)
	for g := t.home(h); ; {
		gp := &t.groups[g]
		for j := range groupSlots {
			switch gp.tags[j] {
			case tag:
				if t.nameAt(gp.refs[j]) == name {
					return gp, j, h
				}
			case tagEmpty:
				return nil, 0, h
			}
		}
		if g++; g == len(t.groups) {
			g = 0
		}
	}
}

// put stores obj under name and returns the object it replaced, if any.
func (t *nameTable) put(name string, obj unsafe.Pointer) (old unsafe.Pointer, existed bool) {
	if (t.used+1)*5 > len(t.groups)*groupSlots*4 { // keep a fifth of the slots empty
		t.rebuild(groupsFor(t.live + 1))
	}
	grp, j, h := t.find(name)
	if grp != nil {
		old, grp.objs[j] = grp.objs[j], obj
		return old, true
	}
	t.insert(h, name, obj)
	return nil, false
}

// insert stores a name known to be absent in the first free slot of its
// probe path: a tombstone, or an empty slot.
func (t *nameTable) insert(h uint64, name string, obj unsafe.Pointer) {
	for g := t.home(h); ; {
		grp := &t.groups[g]
		for j := range groupSlots {
			if grp.tags[j] <= tagDeleted {
				if grp.tags[j] == tagEmpty {
					t.used++
				}
				grp.tags[j], grp.refs[j], grp.objs[j] = tagOf(h), t.appendName(name), obj
				t.live++
				return
			}
		}
		if g++; g == len(t.groups) {
			g = 0
		}
	}
}

// appendName copies name into the table's bytes and returns its offset.
func (t *nameTable) appendName(name string) uint32 {
	ref := len(t.names)
	if ref+binary.MaxVarintLen64+len(name) > math.MaxUint32 {
		panic(fmt.Sprintf("cache: names of one namespace exceed %d bytes", uint32(math.MaxUint32)))
	}
	t.names = binary.AppendUvarint(t.names, uint64(len(name)))
	t.names = append(t.names, name...)
	return uint32(ref)
}

// entrySize returns the bytes name takes in a table's names.
func entrySize(name string) int {
	return (bits.Len64(uint64(len(name))|1)+6)/7 + len(name)
}

// delete removes the object named name and returns it.
func (t *nameTable) delete(name string) (old unsafe.Pointer, ok bool) {
	grp, j, _ := t.find(name)
	if grp == nil {
		return nil, false
	}
	old = grp.objs[j]
	grp.tags[j], grp.objs[j] = tagDeleted, nil
	t.live--
	t.garbage += entrySize(name)
	t.shrink()
	return old, true
}

// shrink rebuilds the table after a delete when it is mostly empty or its
// names are mostly garbage.
func (t *nameTable) shrink() {
	sparse := len(t.groups) > 1 && t.live*8 < len(t.groups)*groupSlots
	wasteful := t.garbage > 4096 && 2*t.garbage > len(t.names)
	if sparse || wasteful {
		t.rebuild(groupsFor(t.live))
	}
}

// rebuild moves the live objects into n new groups and their names into
// new bytes, dropping tombstones and garbage.
func (t *nameTable) rebuild(n int) {
	next := &nameTable{seed: t.seed, groups: make([]nameGroup, n),
		names: make([]byte, 0, len(t.names)-t.garbage)}
	for i := range t.groups {
		grp := &t.groups[i]
		for j := range groupSlots {
			if grp.tags[j] > tagDeleted {
				name := t.nameAt(grp.refs[j])
				next.insert(maphash.String(next.seed, name), name, grp.objs[j])
			}
		}
	}
	*t = *next
}

// each calls f with every name and object until f returns false, and
// reports whether it ran to the end. The names share the table's bytes.
func (t *nameTable) each(f func(name string, obj unsafe.Pointer) bool) bool {
	for i := range t.groups {
		grp := &t.groups[i]
		for j := range groupSlots {
			if grp.tags[j] > tagDeleted && !f(t.nameAt(grp.refs[j]), grp.objs[j]) {
				return false
			}
		}
	}
	return true
}
