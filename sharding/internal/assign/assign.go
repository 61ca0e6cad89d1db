// Package assign is a ring's assignment at admission: the mutating
// webhook that labels unassigned objects with their shard, and the
// MutatingWebhookConfiguration the sharder keeps for it.
//
// Guarantees:
//   - The webhook never moves an assigned object; an UPDATE that drops the
//     shard label of an object that was not draining keeps its old shard,
//     the UPDATE that acknowledges a drain gets the new shard at once.
//   - With no view, or no live shard, it admits the object unchanged (the
//     sweep assigns it later); the configuration is failurePolicy Ignore.
//   - The configuration selects only objects without the ring's shard
//     label, so assigned objects never call the webhook.
package assign

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
	"github.com/kubeloop/kubeloop/webhook/admission"
)

type metaOnly struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
}

// Handler is the assignment webhook of a ring (see the public
// Ring.WebhookHandler): it labels unassigned objects with their shard on
// this replica's last view.
type Handler struct {
	spec *spec.Spec
	view func() *membership.View
}

// NewHandler returns s's webhook; view returns the last view of the ring
// (nil before the first read).
func NewHandler(s *spec.Spec, view func() *membership.View) http.Handler {
	h := &Handler{spec: s, view: view}
	return &admission.Webhook{Handler: admission.HandlerFunc(h.admit)}
}

func (h *Handler) admit(_ context.Context, req admission.Request) admission.Response {
	r := h.spec
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	k, ok := r.KindOf(schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind})
	if !ok {
		return admission.Allowed("not sharded by ring " + r.Ring)
	}
	var obj metaOnly
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("sharding: decode %s: %w", req.Kind.Kind, err))
	}
	lbl := obj.Metadata.Labels
	if lbl[r.ShardKey] != "" {
		return admission.Allowed("")
	}
	shard := ""
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		var old metaOnly
		if err := json.Unmarshal(req.OldObject.Raw, &old); err == nil {
			if s := old.Metadata.Labels[r.ShardKey]; s != "" && old.Metadata.Labels[r.DrainKey] == "" {
				shard = s // keep the assignment a client dropped
			}
		}
	}
	if shard == "" {
		v := h.view()
		if v == nil {
			return admission.Allowed("no view of ring " + r.Ring + " yet")
		}
		if obj.Metadata.Namespace == "" {
			obj.Metadata.Namespace = req.Namespace
		}
		if obj.Metadata.Name == "" {
			obj.Metadata.Name = req.Name
		}
		m := &metav1.PartialObjectMetadata{ObjectMeta: obj.Metadata}
		if shard = v.Ring.Shard(spec.Key(k.GVK.GroupKind(), m)); shard == "" {
			return admission.Allowed("no live shard in ring " + r.Ring)
		}
		r.Metrics.Assignments.WithLabelValues(r.Ring, "webhook").Inc()
	}
	var ops []admission.PatchOperation
	if lbl == nil {
		ops = append(ops, admission.PatchOperation{Op: "add", Path: "/metadata/labels", Value: map[string]string{r.ShardKey: shard}})
	} else {
		ops = append(ops, admission.PatchOperation{Op: "add", Path: "/metadata/labels/" + spec.EscapePointer(r.ShardKey), Value: shard})
		if _, ok := lbl[r.DrainKey]; ok {
			ops = append(ops, admission.PatchOperation{Op: "remove", Path: "/metadata/labels/" + spec.EscapePointer(r.DrainKey)})
		}
	}
	return admission.Patched("assigned to shard "+shard, ops...)
}

// configuration returns the MutatingWebhookConfiguration the
// sharder keeps: one webhook for every sharded kind, called only for
// objects without this ring's shard label, failurePolicy Ignore.
// Config is what the sharder writes in the MutatingWebhookConfiguration
// (the public WebhookOptions, defaulted).
type Config struct {
	Disabled          bool
	ConfigurationName string
	Service           *admissionregistrationv1.ServiceReference
	URL               string
	CABundle          []byte
	TimeoutSeconds    int32
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
	// Path is the webhook's path on the server.
	Path string
}

func configuration(r *spec.Spec, w Config) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: w.CABundle}
	if w.Service != nil {
		svc := *w.Service
		svc.Path = ptr.To(w.Path)
		cc.Service = &svc
	} else {
		cc.URL = ptr.To(strings.TrimSuffix(w.URL, "/") + w.Path)
	}
	var rules []admissionregistrationv1.RuleWithOperations
	for _, k := range r.Kinds {
		m, err := r.C.RESTMapper().RESTMapping(k.GVK.GroupKind(), k.GVK.Version)
		if err != nil {
			return nil, fmt.Errorf("sharding: ring %q: resource of %s: %w", r.Ring, k.GVK.Kind, err)
		}
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{k.GVK.Group},
				APIVersions: []string{"*"},
				Resources:   []string{m.Resource.Resource},
				Scope:       ptr.To(admissionregistrationv1.AllScopes),
			},
		})
	}
	nsSel := &metav1.LabelSelector{}
	if w.NamespaceSelector != nil {
		nsSel = w.NamespaceSelector
	}
	sel := &metav1.LabelSelector{}
	if w.ObjectSelector != nil {
		sel = w.ObjectSelector.DeepCopy()
	}
	sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.ShardKey, Operator: metav1.LabelSelectorOpDoesNotExist})
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: w.ConfigurationName, Labels: map[string]string{spec.RingLabel: r.Ring}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    r.Ring + ".sharding.kubeloop.dev",
			ClientConfig:            cc,
			Rules:                   rules,
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector:       nsSel,
			ObjectSelector:          sel,
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To(w.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
		}},
	}, nil
}

// Ensure creates or updates the configuration w when w.Service or w.URL
// is set.
func Ensure(ctx context.Context, r *spec.Spec, w Config) error {
	if w.Disabled || (w.Service == nil && w.URL == "") {
		return nil
	}
	want, err := configuration(r, w)
	if err != nil {
		return err
	}
	cur := &admissionregistrationv1.MutatingWebhookConfiguration{}
	err = r.C.Get(ctx, client.ObjectKey{Name: want.Name}, cur)
	if kerrors.IsNotFound(err) {
		if err := r.C.Create(ctx, want); err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("sharding: ring %q: create MutatingWebhookConfiguration %s: %w", r.Ring, want.Name, err)
		}
		r.Log.Info("created the webhook configuration", "name", want.Name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sharding: ring %q: get MutatingWebhookConfiguration %s: %w", r.Ring, want.Name, err)
	}
	if sameWebhooks(cur.Webhooks, want.Webhooks) && cur.Labels[spec.RingLabel] == r.Ring {
		return nil
	}
	cur.Webhooks = want.Webhooks
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels[spec.RingLabel] = r.Ring
	if err := r.C.Update(ctx, cur); err != nil {
		return fmt.Errorf("sharding: ring %q: update MutatingWebhookConfiguration %s: %w", r.Ring, want.Name, err)
	}
	r.Log.Info("updated the webhook configuration", "name", want.Name)
	return nil
}

// sameWebhooks compares what the sharder sets; the API server defaults
// the rest the same way every time.
func sameWebhooks(a, b []admissionregistrationv1.MutatingWebhook) bool {
	return equality.Semantic.DeepEqual(a, b)
}
