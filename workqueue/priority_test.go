package workqueue_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/workqueue"
)

type prioAdd struct {
	key  string
	prio int
}

func TestPriorityOrder(t *testing.T) {
	tests := []struct {
		name string
		give []prioAdd
		want []string
	}{
		{
			name: "higher first, FIFO within a priority",
			give: []prioAdd{{"l1", workqueue.LowPriority}, {"n1", 0}, {"h1", 10}, {"n2", 0}, {"l2", workqueue.LowPriority}, {"h2", 10}},
			want: []string{"h1", "h2", "n1", "n2", "l1", "l2"},
		},
		{
			name: "re-add raises priority",
			give: []prioAdd{{"a", 0}, {"b", 5}, {"a", 10}},
			want: []string{"a", "b"},
		},
		{
			name: "re-add never lowers priority",
			give: []prioAdd{{"a", 5}, {"b", 1}, {"a", workqueue.LowPriority}},
			want: []string{"a", "b"},
		},
		{
			name: "raised key goes behind its new priority's keys",
			give: []prioAdd{{"x", 5}, {"a", 0}, {"y", 5}, {"a", 5}},
			want: []string{"x", "y", "a"},
		},
		{
			name: "negative priorities",
			give: []prioAdd{{"a", -3}, {"b", -1}, {"c", -2}},
			want: []string{"b", "c", "a"},
		},
		{
			name: "many priorities",
			give: []prioAdd{{"p1", 1}, {"p9", 9}, {"p3", 3}, {"p7", 7}, {"p2", 2}, {"p8", 8}, {"p4", 4}, {"p6", 6}, {"p5", 5}, {"p10", 10}, {"p0", 0}},
			want: []string{"p10", "p9", "p8", "p7", "p6", "p5", "p4", "p3", "p2", "p1", "p0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue(t, workqueue.Options[req]{})
			for _, a := range tt.give {
				q.AddWithOpts(workqueue.AddOpts{Priority: a.prio}, r(a.key))
			}
			assert.Equal(t, tt.want, drain(t, q))
			// Buckets emptied and refilled keep the order.
			for _, a := range tt.give {
				q.AddWithOpts(workqueue.AddOpts{Priority: a.prio}, r(a.key))
			}
			assert.Equal(t, tt.want, drain(t, q))
		})
	}
}

func TestPriorityOfDelayedAndInFlightKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{})
		q.AddWithOpts(workqueue.AddOpts{Priority: 10, After: time.Second}, r("delayed"))
		q.Add(r("busy"))
		k, _ := q.Get()
		q.AddWithOpts(workqueue.AddOpts{Priority: 20}, r("busy"))
		q.Add(r("n"))
		time.Sleep(time.Second)
		synctest.Wait()
		q.Done(k)
		assert.Equal(t, []string{"busy", "delayed", "n"}, drain(t, q))
	})
}

func TestLowPriorityAgesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{AgeAfter: time.Second})
		q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, r("low"))
		time.Sleep(time.Millisecond)
		synctest.Wait()
		q.Add(r("n1"))
		q.Add(r("n2"))
		k, _ := q.Get()
		assert.Equal(t, "n1", k.Name, "not aged yet")
		q.Done(k)

		time.Sleep(time.Second)
		synctest.Wait()
		q.Add(r("n3"))
		k, _ = q.Get()
		assert.Equal(t, "low", k.Name, "waited AgeAfter: served before younger keys")
		q.Done(k)
		assert.Equal(t, []string{"n2", "n3"}, drain(t, q))
	})
}

func TestNegativeAgeAfterNeverAges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{AgeAfter: -1})
		q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, r("low"))
		time.Sleep(time.Hour)
		synctest.Wait()
		q.Add(r("n"))
		assert.Equal(t, []string{"n", "low"}, drain(t, q))
	})
}

func TestFairnessRoundRobinsAcrossGroups(t *testing.T) {
	q := newQueue(t, workqueue.Options[req]{FairnessKey: func(k req) string { return k.Namespace }})
	for _, name := range []string{"a1", "a2", "a3", "a4"} {
		q.Add(req{Namespace: "a", Name: name})
	}
	q.Add(req{Namespace: "b", Name: "b1"})
	q.Add(req{Namespace: "c", Name: "c1"})
	q.Add(req{Namespace: "b", Name: "b2"})
	q.AddWithOpts(workqueue.AddOpts{Priority: 1}, req{Namespace: "a", Name: "a9"})
	assert.Equal(t, []string{"a9", "a1", "b1", "c1", "a2", "b2", "a3", "a4"}, drain(t, q))

	// Groups emptied and refilled still alternate.
	q.Add(req{Namespace: "a", Name: "a1"})
	q.Add(req{Namespace: "a", Name: "a2"})
	q.Add(req{Namespace: "b", Name: "b1"})
	assert.Equal(t, []string{"a1", "b1", "a2"}, drain(t, q))
}

func TestFairnessWithRaisedPriority(t *testing.T) {
	q := newQueue(t, workqueue.Options[req]{FairnessKey: func(k req) string { return k.Namespace }})
	q.Add(req{Namespace: "a", Name: "a1"})
	q.Add(req{Namespace: "a", Name: "a2"})
	q.Add(req{Namespace: "b", Name: "b1"})
	q.AddWithOpts(workqueue.AddOpts{Priority: 1}, req{Namespace: "a", Name: "a2"})
	assert.Equal(t, []string{"a2", "a1", "b1"}, drain(t, q))
}
