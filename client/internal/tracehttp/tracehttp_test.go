package tracehttp

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/trace"
)

func TestCallOf(t *testing.T) {
	tests := []struct {
		name   string
		method string
		give   string
		want   trace.Call
	}{
		{"get core", "GET", "/api/v1/namespaces/ns/configmaps/a",
			trace.Call{Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "ns", Name: "a"}},
		{"list core", "GET", "/api/v1/namespaces/ns/configmaps?labelSelector=x",
			trace.Call{Verb: "list", Version: "v1", Resource: "configmaps", Namespace: "ns"}},
		{"list everywhere", "GET", "/apis/apps/v1/deployments",
			trace.Call{Verb: "list", Group: "apps", Version: "v1", Resource: "deployments"}},
		{"watch", "GET", "/api/v1/namespaces/ns/pods?watch=true",
			trace.Call{Verb: "watch", Version: "v1", Resource: "pods", Namespace: "ns"}},
		{"create", "POST", "/apis/example.com/v1/namespaces/ns/widgets",
			trace.Call{Verb: "create", Group: "example.com", Version: "v1", Resource: "widgets", Namespace: "ns"}},
		{"update status", "PUT", "/apis/apps/v1/namespaces/ns/deployments/web/status",
			trace.Call{Verb: "update", Group: "apps", Version: "v1", Resource: "deployments", Subresource: "status", Namespace: "ns", Name: "web"}},
		{"patch cluster-scoped", "PATCH", "/api/v1/nodes/n1",
			trace.Call{Verb: "patch", Version: "v1", Resource: "nodes", Name: "n1"}},
		{"delete", "DELETE", "/api/v1/namespaces/ns/secrets/s",
			trace.Call{Verb: "delete", Version: "v1", Resource: "secrets", Namespace: "ns", Name: "s"}},
		{"deletecollection", "DELETE", "/api/v1/namespaces/ns/secrets",
			trace.Call{Verb: "deletecollection", Version: "v1", Resource: "secrets", Namespace: "ns"}},
		{"a namespace", "GET", "/api/v1/namespaces/ns",
			trace.Call{Verb: "get", Version: "v1", Resource: "namespaces", Name: "ns"}},
		{"a namespace's status", "PUT", "/api/v1/namespaces/ns/status",
			trace.Call{Verb: "update", Version: "v1", Resource: "namespaces", Name: "ns", Subresource: "status"}},
		{"not the API", "GET", "/healthz",
			trace.Call{Verb: "list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse("https://api.example" + tt.give)
			assert.NoError(t, err)
			got := callOf(&http.Request{Method: tt.method, URL: u})
			tt.want.Method, tt.want.Path = tt.method, u.Path
			assert.Equal(t, tt.want, got)
		})
	}
}
