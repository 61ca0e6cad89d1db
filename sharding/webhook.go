package sharding

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
	"github.com/kubeloop/kubeloop/webhook/admission"
)

// WebhookHandler returns the assignment webhook, to serve at
// Path(ring) on the webhook server (the manager does this). It answers
// CREATE and UPDATE of sharded objects that carry no shard label: it
// assigns them to their shard on this replica's view of the ring. An
// UPDATE that drops the label of an object that was not draining keeps
// its old shard (a client wrote an object read before it was assigned);
// the UPDATE that acknowledges a drain gets the new shard at once. It
// never moves an assigned object. With no view yet, or no live shard, it
// admits the object unchanged and the sweep assigns it later.
func (r *Ring) WebhookHandler() http.Handler {
	return &admission.Webhook{Handler: admission.HandlerFunc(r.admit)}
}

type metaOnly struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
}

func (r *Ring) admit(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	k, ok := r.kindOf(schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind})
	if !ok {
		return admission.Allowed("not sharded by ring " + r.opts.Ring)
	}
	var obj metaOnly
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("sharding: decode %s: %w", req.Kind.Kind, err))
	}
	lbl := obj.Metadata.Labels
	if lbl[r.shardKey] != "" {
		return admission.Allowed("")
	}
	shard := ""
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		var old metaOnly
		if err := json.Unmarshal(req.OldObject.Raw, &old); err == nil {
			if s := old.Metadata.Labels[r.shardKey]; s != "" && old.Metadata.Labels[r.drainKey] == "" {
				shard = s // keep the assignment a client dropped
			}
		}
	}
	if shard == "" {
		v := r.view.Load()
		if v == nil {
			return admission.Allowed("no view of ring " + r.opts.Ring + " yet")
		}
		if obj.Metadata.Namespace == "" {
			obj.Metadata.Namespace = req.Namespace
		}
		if obj.Metadata.Name == "" {
			obj.Metadata.Name = req.Name
		}
		m := &metav1.PartialObjectMetadata{ObjectMeta: obj.Metadata}
		if shard = v.ring.Shard(Key(k.gvk.GroupKind(), m)); shard == "" {
			return admission.Allowed("no live shard in ring " + r.opts.Ring)
		}
		r.metrics.assignments.WithLabelValues(r.opts.Ring, "webhook").Inc()
	}
	var ops []admission.PatchOperation
	if lbl == nil {
		ops = append(ops, admission.PatchOperation{Op: "add", Path: "/metadata/labels", Value: map[string]string{r.shardKey: shard}})
	} else {
		ops = append(ops, admission.PatchOperation{Op: "add", Path: "/metadata/labels/" + escapePointer(r.shardKey), Value: shard})
		if _, ok := lbl[r.drainKey]; ok {
			ops = append(ops, admission.PatchOperation{Op: "remove", Path: "/metadata/labels/" + escapePointer(r.drainKey)})
		}
	}
	return admission.Patched("assigned to shard "+shard, ops...)
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// webhookConfiguration returns the MutatingWebhookConfiguration the
// sharder keeps: one webhook for every sharded kind, called only for
// objects without this ring's shard label, failurePolicy Ignore.
func (r *Ring) webhookConfiguration() (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	w := r.opts.Webhook
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: w.CABundle}
	if w.Service != nil {
		svc := *w.Service
		svc.Path = ptr.To(Path(r.opts.Ring))
		cc.Service = &svc
	} else {
		cc.URL = ptr.To(strings.TrimSuffix(w.URL, "/") + Path(r.opts.Ring))
	}
	var rules []admissionregistrationv1.RuleWithOperations
	for _, k := range r.kinds {
		m, err := r.c.RESTMapper().RESTMapping(k.gvk.GroupKind(), k.gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("sharding: ring %q: resource of %s: %w", r.opts.Ring, k.gvk.Kind, err)
		}
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{k.gvk.Group},
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
	sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.shardKey, Operator: metav1.LabelSelectorOpDoesNotExist})
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: w.ConfigurationName, Labels: map[string]string{RingLabel: r.opts.Ring}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    r.opts.Ring + ".sharding.kubeloop.dev",
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

// ensureWebhookConfiguration creates or updates the configuration when
// Webhook.Service or Webhook.URL is set.
func (r *Ring) ensureWebhookConfiguration(ctx context.Context) error {
	w := r.opts.Webhook
	if w.Disabled || (w.Service == nil && w.URL == "") {
		return nil
	}
	want, err := r.webhookConfiguration()
	if err != nil {
		return err
	}
	cur := &admissionregistrationv1.MutatingWebhookConfiguration{}
	err = r.c.Get(ctx, client.ObjectKey{Name: want.Name}, cur)
	if kerrors.IsNotFound(err) {
		if err := r.c.Create(ctx, want); err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("sharding: ring %q: create MutatingWebhookConfiguration %s: %w", r.opts.Ring, want.Name, err)
		}
		r.log.Info("created the webhook configuration", "name", want.Name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sharding: ring %q: get MutatingWebhookConfiguration %s: %w", r.opts.Ring, want.Name, err)
	}
	if sameWebhooks(cur.Webhooks, want.Webhooks) && cur.Labels[RingLabel] == r.opts.Ring {
		return nil
	}
	cur.Webhooks = want.Webhooks
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels[RingLabel] = r.opts.Ring
	if err := r.c.Update(ctx, cur); err != nil {
		return fmt.Errorf("sharding: ring %q: update MutatingWebhookConfiguration %s: %w", r.opts.Ring, want.Name, err)
	}
	r.log.Info("updated the webhook configuration", "name", want.Name)
	return nil
}

// sameWebhooks compares what the sharder sets; the API server defaults
// the rest the same way every time.
func sameWebhooks(a, b []admissionregistrationv1.MutatingWebhook) bool {
	return equality.Semantic.DeepEqual(a, b)
}
