package predicate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
)

type meta struct {
	rv          string
	generation  int64
	labels      map[string]string
	annotations map[string]string
}

func obj(m meta) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "a", ResourceVersion: m.rv, Generation: m.generation, Labels: m.labels, Annotations: m.annotations,
	}}
}

// verdicts are a predicate's answers for a create, update, delete and
// generic event.
type verdicts struct{ create, update, delete, generic bool }

func eval(p predicate.Predicate, oldObj, newObj client.Object) verdicts {
	return verdicts{
		create:  p.Create(handler.CreateEvent{Object: newObj}),
		update:  p.Update(handler.UpdateEvent{ObjectOld: oldObj, ObjectNew: newObj}),
		delete:  p.Delete(handler.DeleteEvent{Object: newObj}),
		generic: p.Generic(handler.GenericEvent{Object: newObj}),
	}
}

var (
	all      = verdicts{true, true, true, true}
	none     = verdicts{}
	noUpdate = verdicts{create: true, update: false, delete: true, generic: true}
)

func TestPredicates(t *testing.T) {
	base := meta{rv: "1", generation: 1, labels: map[string]string{"app": "web"}, annotations: map[string]string{"a": "1"}}
	with := func(f func(*meta)) meta {
		m := base
		f(&m)
		return m
	}
	isWeb := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["app"] == "web" })
	sel, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	require.NoError(t, err)

	tests := []struct {
		name     string
		give     predicate.Predicate
		old, new meta
		want     verdicts
	}{
		{name: "Funcs zero lets all through", give: predicate.Funcs{}, old: base, new: base, want: all},
		{name: "Funcs with a function", give: predicate.Funcs{UpdateFunc: func(handler.UpdateEvent) bool { return false }},
			old: base, new: base, want: noUpdate},
		{name: "NewPredicateFuncs true", give: isWeb, old: base, new: base, want: all},
		{name: "NewPredicateFuncs false", give: isWeb, old: base, new: with(func(m *meta) { m.labels = nil }), want: none},
		{name: "NewPredicateFuncs update looks at new", give: isWeb,
			old: with(func(m *meta) { m.labels = nil }), new: base, want: all},
		{name: "ResourceVersionChanged: changed", give: predicate.ResourceVersionChangedPredicate{},
			old: base, new: with(func(m *meta) { m.rv = "2" }), want: all},
		{name: "ResourceVersionChanged: resync", give: predicate.ResourceVersionChangedPredicate{},
			old: base, new: base, want: noUpdate},
		{name: "GenerationChanged: changed", give: predicate.GenerationChangedPredicate{},
			old: base, new: with(func(m *meta) { m.rv, m.generation = "2", 2 }), want: all},
		{name: "GenerationChanged: status only", give: predicate.GenerationChangedPredicate{},
			old: base, new: with(func(m *meta) { m.rv = "2" }), want: noUpdate},
		{name: "LabelChanged: changed", give: predicate.LabelChangedPredicate{},
			old: base, new: with(func(m *meta) { m.labels = map[string]string{"app": "db"} }), want: all},
		{name: "LabelChanged: same", give: predicate.LabelChangedPredicate{},
			old: base, new: with(func(m *meta) { m.rv = "2"; m.labels = map[string]string{"app": "web"} }), want: noUpdate},
		{name: "AnnotationChanged: changed", give: predicate.AnnotationChangedPredicate{},
			old: base, new: with(func(m *meta) { m.annotations = nil }), want: all},
		{name: "AnnotationChanged: same", give: predicate.AnnotationChangedPredicate{},
			old: base, new: with(func(m *meta) { m.rv = "3" }), want: noUpdate},
		{name: "LabelSelector: match", give: sel, old: base, new: base, want: all},
		{name: "LabelSelector: no match", give: sel, old: base, new: with(func(m *meta) { m.labels = map[string]string{"app": "db"} }), want: none},
		{name: "And: all true", give: predicate.And(predicate.Funcs{}, isWeb), old: base, new: base, want: all},
		{name: "And: one false", give: predicate.And(predicate.GenerationChangedPredicate{}, isWeb), old: base, new: base, want: noUpdate},
		{name: "And: empty", give: predicate.And[client.Object](), old: base, new: base, want: all},
		{name: "Or: one true", give: predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}),
			old: base, new: with(func(m *meta) { m.labels = nil }), want: all},
		{name: "Or: all false", give: predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}),
			old: base, new: base, want: noUpdate},
		{name: "Or: empty", give: predicate.Or[client.Object](), old: base, new: base, want: none},
		{name: "Not", give: predicate.Not(predicate.GenerationChangedPredicate{}), old: base, new: base,
			want: verdicts{create: false, update: true, delete: false, generic: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, eval(tt.give, obj(tt.old), obj(tt.new)))
		})
	}
}

func TestChangedPredicatesDropUpdatesMissingAnObject(t *testing.T) {
	preds := map[string]predicate.Predicate{
		"ResourceVersion": predicate.ResourceVersionChangedPredicate{},
		"Generation":      predicate.GenerationChangedPredicate{},
		"Label":           predicate.LabelChangedPredicate{},
		"Annotation":      predicate.AnnotationChangedPredicate{},
	}
	for name, p := range preds {
		t.Run(name, func(t *testing.T) {
			assert.False(t, p.Update(handler.UpdateEvent{ObjectNew: obj(meta{rv: "1"})}))
			assert.False(t, p.Update(handler.UpdateEvent{ObjectOld: obj(meta{rv: "1"})}))
		})
	}
}

func TestNewPredicateFuncsNilObject(t *testing.T) {
	p := predicate.NewPredicateFuncs(func(client.Object) bool { return true })
	assert.Equal(t, none, verdicts{
		create:  p.Create(handler.CreateEvent{}),
		update:  p.Update(handler.UpdateEvent{}),
		delete:  p.Delete(handler.DeleteEvent{}),
		generic: p.Generic(handler.GenericEvent{}),
	})
}

func TestLabelSelectorPredicateInvalid(t *testing.T) {
	_, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Like", Values: []string{"web"}}},
	})
	require.Error(t, err)
	assert.Equal(t, `predicate: invalid label selector: "Like" is not a valid label selector operator`, err.Error())
}
