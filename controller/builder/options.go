package builder

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/handler/predicate"
)

// options are the settings of one For, Owns or Watches call.
type options struct {
	predicates   []predicate.Predicate
	onlyMetadata bool
	everyOwner   bool
	waitForCRD   bool // crd.go
	// clusters chooses the clusters watched (clusters.go); nil is the
	// manager's own only.
	clusters func(name string) bool
}

// Option configures a For, Owns or Watches call.
type Option interface {
	applyTo(*options)
}

// ForOption configures For.
type ForOption = Option

// OwnsOption configures Owns.
type OwnsOption = Option

// WatchesOption configures Watches.
type WatchesOption = Option

func (in *watchInput) apply(opts []Option) {
	for _, opt := range opts {
		if opt != nil {
			opt.applyTo(&in.options)
		}
	}
}

// Predicates is the Option returned by WithPredicates.
type Predicates struct {
	predicates []predicate.Predicate
}

// WithPredicates filters the events of one For, Owns or Watches, after the
// builder's WithEventFilter predicates.
func WithPredicates(preds ...predicate.Predicate) Predicates {
	return Predicates{predicates: preds}
}

func (p Predicates) applyTo(o *options) { o.predicates = append(o.predicates, p.predicates...) }

type optionFunc func(*options)

func (f optionFunc) applyTo(o *options) { f(o) }

// OnlyMetadata watches the kind as metav1.PartialObjectMetadata: the cache
// holds only metadata, which saves memory for kinds with large specs
// (Secrets, ConfigMaps). Events then carry *metav1.PartialObjectMetadata;
// reading the full object through the client would start a second,
// full informer for the kind.
var OnlyMetadata Option = optionFunc(func(o *options) { o.onlyMetadata = true })

// MatchEveryOwner makes Owns enqueue every owner of For's kind named in an
// object's ownerReferences, not only the controller owner.
var MatchEveryOwner Option = optionFunc(func(o *options) { o.everyOwner = true })

// project returns obj, or with OnlyMetadata a PartialObjectMetadata of
// obj's kind.
func (o options) project(obj client.Object, scheme *runtime.Scheme) (client.Object, error) {
	if !o.onlyMetadata {
		return obj, nil
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	return meta, nil
}
