package sharder

import (
	"fmt"
	"time"
)

// decide moves an object of a shard that is alive but no longer its own
// with a drain, once it knows the shard is not gone.
func Example_decide() {
	in := input{cur: "a", want: "b", alive: true, now: time.UnixMilli(42), shardKey: "shard/r", drainKey: "drain/r"}
	m := decide(in)
	fmt.Println(m.act)
	in.gone = no
	m = decide(in)
	fmt.Println(m.act, m.shard, m.labels, m.pending)
	// Output:
	// readPeer
	// drain a map[drain/r:42] true
}
