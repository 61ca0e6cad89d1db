package apiutil

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Content types the REST clients negotiate.
const (
	contentTypeProtobuf = runtime.ContentTypeProtobuf
	contentTypeJSON     = runtime.ContentTypeJSON
)

// RESTClientForGVK returns a REST client for gvk's group and version.
//
// When forceUnstructured is false the client encodes and decodes the Go
// types registered in codecs' scheme, and speaks protobuf for built-in
// kinds (about 8x cheaper to decode than JSON) and JSON for others. When it
// is true the client speaks JSON and decodes into
// *unstructured.Unstructured and *unstructured.UnstructuredList.
//
// httpClient is shared by every client built from it; nil means a new one
// from cfg. cfg is copied, never modified.
func RESTClientForGVK(gvk schema.GroupVersionKind, forceUnstructured bool, cfg *rest.Config, codecs serializer.CodecFactory, httpClient *http.Client) (rest.Interface, error) {
	if cfg == nil {
		return nil, fmt.Errorf("apiutil: REST client for %s: rest.Config is nil", gvk)
	}
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("apiutil: REST client for %s: %w", gvk, err)
		}
	}
	c := restConfigFor(gvk, forceUnstructured, cfg, codecs)
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("apiutil: REST client for %s: %w", gvk, err)
	}
	return rc, nil
}

// RESTConfigForGVK returns a copy of cfg set up the way RESTClientForGVK
// sets it up for gvk (API path, group-version, content types, serializer),
// for callers that adjust it further, such as the cache, which swaps in a
// cheaper protobuf decoder for watches, before building a client with
// rest.RESTClientForConfigAndClient.
func RESTConfigForGVK(gvk schema.GroupVersionKind, forceUnstructured bool, cfg *rest.Config, codecs serializer.CodecFactory) *rest.Config {
	return restConfigFor(gvk, forceUnstructured, cfg, codecs)
}

func restConfigFor(gvk schema.GroupVersionKind, forceUnstructured bool, cfg *rest.Config, codecs serializer.CodecFactory) *rest.Config {
	var c *rest.Config
	if forceUnstructured {
		c = dynamic.ConfigFor(cfg)
	} else {
		c = rest.CopyConfig(cfg)
		c.NegotiatedSerializer = codecs.WithoutConversion()
		if c.ContentType == "" {
			if IsBuiltIn(gvk) {
				c.ContentType = contentTypeProtobuf
				c.AcceptContentTypes = contentTypeProtobuf + "," + contentTypeJSON
			} else {
				c.ContentType = contentTypeJSON
			}
		}
	}
	gv := gvk.GroupVersion()
	c.GroupVersion = &gv
	if gvk.Group == "" {
		c.APIPath = "/api"
	} else {
		c.APIPath = "/apis"
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return c
}

// IsObjectNamespaced reports whether obj's kind is namespaced, looking its
// kind up in scheme (typed objects) or on the object (unstructured and
// metadata objects), then its scope in mapper.
func IsObjectNamespaced(obj runtime.Object, scheme *runtime.Scheme, mapper meta.RESTMapper) (bool, error) {
	gvk, err := GVKForObject(obj, scheme)
	if err != nil {
		return false, err
	}
	return IsGVKNamespaced(gvk, mapper)
}

// IsGVKNamespaced reports whether gvk is namespaced according to mapper.
func IsGVKNamespaced(gvk schema.GroupVersionKind, mapper meta.RESTMapper) (bool, error) {
	if mapper == nil {
		return false, fmt.Errorf("apiutil: scope of %s: no REST mapper", gvk)
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, fmt.Errorf("apiutil: scope of %s: %w", gvk, err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}
