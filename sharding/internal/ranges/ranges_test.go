package ranges

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("shard-%d", i)
	}
	return out
}

func TestAssignBalancedAndComplete(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 8, 16, 50, 127, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			got := Assign(names(n))
			var union Set
			total := 0
			for name, s := range got {
				assert.True(t, union.Intersect(s).Empty(), "%s overlaps another shard", name)
				union = union.Union(s)
				total += s.Len()
				if n <= Segments {
					assert.GreaterOrEqual(t, s.Len(), Segments/n, name)
					assert.LessOrEqual(t, s.Len(), (Segments+n-1)/n, name)
				}
			}
			assert.Equal(t, All(), union, "every segment has an owner")
			assert.Equal(t, Segments, total)
		})
	}
}

func TestAssignPure(t *testing.T) {
	a := Assign([]string{"c", "a", "b"})
	b := Assign([]string{"b", "c", "a", "a"})
	assert.Equal(t, a, b, "order and duplicates do not matter")
	assert.Nil(t, Assign(nil))
	assert.Equal(t, map[string]Set{"x": All()}, Assign([]string{"x"}))
}

// moved counts the segments whose owner differs between two assignments.
func moved(a, b map[string]Set) int {
	n := 0
	for k := range Segments {
		if ownerOf(a, k) != ownerOf(b, k) {
			n++
		}
	}
	return n
}

func ownerOf(m map[string]Set, k int) string {
	for name, s := range m {
		if s.Has(k) {
			return name
		}
	}
	return ""
}

func TestAssignMoves(t *testing.T) {
	tests := []struct {
		name     string
		from, to []string
		// max is the bound on moved segments: the ideal plus a margin.
		max int
	}{
		{"join 1 to 2", names(1), names(2), Segments/2 + 8},
		{"join 2 to 3", names(2), names(3), Segments/3 + 16},
		{"join 3 to 4", names(3), names(4), Segments/4 + 16},
		{"join 7 to 8", names(7), names(8), Segments/8 + 16},
		{"leave 4 to 3", names(4), names(3), Segments/4 + 16},
		{"leave middle of 3", names(3), []string{"shard-0", "shard-2"}, Segments/3 + 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := moved(Assign(tt.from), Assign(tt.to))
			t.Logf("%d of %d segments moved", m, Segments)
			assert.LessOrEqual(t, m, tt.max)
			assert.Positive(t, m)
		})
	}
}

func TestOfMatchesTheAPIServersRanges(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for k := range Segments {
		start, _ := Start(k)
		end, top := Start(k + 1)
		assert.Equal(t, k, Of(start), "start of %d", k)
		if top {
			assert.Equal(t, k, Of(end-1), "last hash of %d", k)
			assert.Equal(t, k+1, Of(end))
		} else {
			assert.Equal(t, Segments-1, Of(^uint64(0)))
		}
	}
	// Selector agrees with apimachinery's matcher on random uids.
	s := Assign(names(3))["shard-1"]
	sel := Selector("object.metadata.uid", s)
	var reqs []apisharding.ShardRangeRequirement
	re := regexp.MustCompile(`^shardRange\(object\.metadata\.uid, '(0x[0-9a-f]+)', '(0x[0-9a-f]+)'\)$`)
	for part := range strings.SplitSeq(sel, " || ") {
		m := re.FindStringSubmatch(part)
		require.Len(t, m, 3, part)
		reqs = append(reqs, apisharding.ShardRangeRequirement{Key: "object.metadata.uid", Start: m[1], End: m[2]})
	}
	matcher := apisharding.NewSelector(reqs...)
	for range 5000 {
		uid := fmt.Sprintf("%016x-%08x", rnd.Uint64(), rnd.Uint32())
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
		want, err := matcher.Matches(obj)
		require.NoError(t, err)
		require.Equal(t, want, s.HasHash(Hash(uid)), "uid %s", uid)
	}
}

func TestSelector(t *testing.T) {
	tests := []struct {
		name string
		give Set
		want string
	}{
		{"empty", Set{}, "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')"},
		{"all", All(), "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"},
		{"first", Set{}.With(0), "shardRange(object.metadata.uid, '0x0000000000000000', '0x0204081020408103')"},
		{"runs", Set{}.With(0).With(1).With(126),
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x0408102040810205') || " +
				"shardRange(object.metadata.uid, '0xfdfbf7efdfbf7efe', '0x10000000000000000')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Selector("object.metadata.uid", tt.give))
		})
	}
}

func TestCodec(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		want    Set
		wantErr bool
	}{
		{"empty", "v1/127/00000000000000000000000000000000", Set{}, false},
		{"all", "v1/127/7fffffffffffffffffffffffffffffff", All(), false},
		{"some", "v1/127/40000000000000000000000000000003", Set{}.With(0).With(1).With(126), false},
		{"segment 127", "v1/127/80000000000000000000000000000000", Set{}, true},
		{"upper case", "v1/127/0000000000000000000000000000000A", Set{}, true},
		{"short", "v1/127/00", Set{}, true},
		{"sign", "v1/127/+0000000000000000000000000000000", Set{}, true},
		{"other version", "v2/127/00000000000000000000000000000000", Set{}, true},
		{"nothing", "", Set{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.give)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrCodec)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.give, Format(got))
		})
	}
	assert.Len(t, Format(All()), 39, "fixed size")
}

func TestSetString(t *testing.T) {
	assert.Equal(t, "none", Set{}.String())
	assert.Equal(t, "0-1,5,126", Set{}.With(0).With(1).With(5).With(126).String())
	assert.Equal(t, []int{0, 5}, Set{}.With(5).With(0).With(-1).With(127).Segments())
}

func FuzzCodec(f *testing.F) {
	f.Add("v1/127/00000000000000000000000000000000")
	f.Add("v1/127/7fffffffffffffffffffffffffffffff")
	f.Add("v1/127/8fffffffffffffffffffffffffffffff")
	f.Add("v1/127/-0")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			return
		}
		if got := Format(s); got != text {
			t.Fatalf("Parse(%q) = %v, formats as %q", text, s, got)
		}
		for _, k := range s.Segments() {
			if k < 0 || k >= Segments {
				t.Fatalf("segment %d out of range", k)
			}
		}
	})
}

func FuzzSelector(f *testing.F) {
	f.Add(uint64(0), uint64(0), "x")
	f.Add(^uint64(0), uint64(1<<62), "uid")
	f.Fuzz(func(t *testing.T, lo, hi uint64, value string) {
		s := Set{lo: lo, hi: hi & (1<<(Segments-64) - 1)}
		text, err := Parse(Format(s))
		if err != nil || text != s {
			t.Fatalf("round trip of %v: %v, %v", s, text, err)
		}
		h := Hash(value)
		k := Of(h)
		start, _ := Start(k)
		if start > h {
			t.Fatalf("hash %x before the start %x of its segment %d", h, start, k)
		}
		if end, ok := Start(k + 1); ok && end <= h {
			t.Fatalf("hash %x past the end %x of its segment %d", h, end, k)
		}
	})
}
