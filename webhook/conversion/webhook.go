package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kubeloop/kubeloop/webhook/internal/serving"
)

// MaxRequestBytes is the largest ConversionReview a Webhook reads: 64 MiB.
// A review carries every object of a list answer that is not stored in
// the requested version, so it can be far larger than one object.
const MaxRequestBytes = 64 << 20

// Webhook converts the objects of ConversionReviews between the versions of
// the kinds in its scheme, through each kind's Hub.
type Webhook struct {
	scheme       *runtime.Scheme
	deserializer runtime.Decoder
}

var _ http.Handler = (*Webhook)(nil)

// NewWebhook returns a Webhook for the kinds registered in scheme.
func NewWebhook(scheme *runtime.Scheme) *Webhook {
	return &Webhook{scheme: scheme, deserializer: serializer.NewCodecFactory(scheme).UniversalDeserializer()}
}

// ServeHTTP answers one ConversionReview. A request it cannot read (not a
// POST, not JSON, empty, over MaxRequestBytes, not an
// apiextensions.k8s.io/v1 ConversionReview with a request) gets a 4xx
// status and a review whose result says why. Otherwise it answers 200:
// Success with every object converted, or Failure naming the first object
// that could not be (a panic in a conversion function is a Failure too,
// logged and counted).
func (wh *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serving.Serve(r.Context(), w, r, &protocol, wh.answer)
}

// protocol is the apiextensions.k8s.io/v1 ConversionReview for
// serving.Serve, the path the admission webhook shares.
var protocol = serving.Protocol[Review]{
	Name:       "conversion",
	APIVersion: "apiextensions.k8s.io/v1",
	Kind:       "ConversionReview",
	MaxBytes:   MaxRequestBytes,
	Envelope:   func(review *Review) (metav1.TypeMeta, bool) { return review.TypeMeta, review.Request != nil },
	Failure: func(tm metav1.TypeMeta, status metav1.Status) Review {
		return Review{TypeMeta: tm, Response: &Response{Result: status}}
	},
}

// answer converts the objects of a review that serving.Serve checked:
// Success with every object converted, or Failure naming the first that
// could not be.
func (wh *Webhook) answer(ctx context.Context, review *Review) Review {
	log := logr.FromContextOrDiscard(ctx)
	req := review.Request
	resp := &Response{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	converted, err := wh.convertAll(ctx, log, req)
	if err != nil {
		log.Info("conversion failed", "uid", req.UID, "desiredAPIVersion", req.DesiredAPIVersion, "error", err.Error())
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
	} else {
		resp.ConvertedObjects = converted
	}
	return Review{TypeMeta: review.TypeMeta, Response: resp}
}

// convertAll converts every object of req, recovering from a panic in a
// conversion function.
func (wh *Webhook) convertAll(ctx context.Context, log logr.Logger, req *Request) (out []runtime.RawExtension, err error) {
	defer func() {
		if v := recover(); v != nil {
			log.Error(fmt.Errorf("panic: %v", v), "conversion: conversion function panicked", "stack", string(debug.Stack()))
			serving.RecordConversionPanic(ctx, v) // controller_runtime_conversion_webhook_panics_total
			out, err = nil, errors.New("conversion: internal error: a conversion function panicked")
		}
	}()
	desired, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil {
		return nil, fmt.Errorf("conversion: desired API version %q: %w", req.DesiredAPIVersion, err)
	}
	out = make([]runtime.RawExtension, 0, len(req.Objects))
	for i, raw := range req.Objects {
		data, err := wh.convert(raw.Raw, desired)
		if err != nil {
			return nil, fmt.Errorf("conversion: object %d: %w", i, err)
		}
		out = append(out, runtime.RawExtension{Raw: data})
	}
	return out, nil
}

// convert converts one JSON object to the version desired.
func (wh *Webhook) convert(raw []byte, desired schema.GroupVersion) ([]byte, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	from := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	if from.Kind == "" || from.Version == "" {
		return nil, fmt.Errorf("no apiVersion or kind (apiVersion %q kind %q)", tm.APIVersion, tm.Kind)
	}
	to := desired.WithKind(from.Kind)
	if from.Group != to.Group {
		return nil, fmt.Errorf("%s cannot become %s: groups differ", from, to)
	}
	if from == to {
		return raw, nil
	}
	src, err := wh.scheme.New(from)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	dst, err := wh.scheme.New(to)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", to, err)
	}
	if err := runtime.DecodeInto(wh.deserializer, raw, src); err != nil {
		return nil, fmt.Errorf("decode %s: %w", from, err)
	}
	if err := wh.convertObject(src, dst); err != nil {
		return nil, fmt.Errorf("%s to %s: %w", from, to, err)
	}
	dst.GetObjectKind().SetGroupVersionKind(to)
	data, err := json.Marshal(dst)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", to, err)
	}
	return data, nil
}

// convertObject converts src to dst directly when one is the Hub, else
// through a new Hub.
func (wh *Webhook) convertObject(src, dst runtime.Object) error {
	srcHub, srcIsHub := src.(Hub)
	dstHub, dstIsHub := dst.(Hub)
	srcConv, srcIsConv := src.(Convertible)
	dstConv, dstIsConv := dst.(Convertible)
	switch {
	case srcIsHub && dstIsConv:
		return dstConv.ConvertFrom(srcHub)
	case dstIsHub && srcIsConv:
		return srcConv.ConvertTo(dstHub)
	case srcIsConv && dstIsConv:
		gvks, _, err := wh.scheme.ObjectKinds(src)
		if err != nil || len(gvks) == 0 {
			return fmt.Errorf("kind of %T: %w", src, err)
		}
		hub, err := findHub(wh.scheme, gvks[0].GroupKind())
		if err != nil {
			return err
		}
		if err := srcConv.ConvertTo(hub); err != nil {
			return fmt.Errorf("to hub: %w", err)
		}
		return dstConv.ConvertFrom(hub)
	default:
		return fmt.Errorf("%T and %T are not a Hub and a Convertible", src, dst)
	}
}
