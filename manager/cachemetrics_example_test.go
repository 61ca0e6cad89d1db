package manager_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/manager"
)

// The metrics server serves the cache's sizes at /debug/cache;
// CacheDebugHandler mounts the same handler anywhere else. This manager
// has not started (it needs a cluster), so its ConfigMap informer holds
// nothing yet. Once running, its registry also has kubeloop_cache_objects
// and kubeloop_cache_bytes per kind and shape.
func ExampleManager_CacheDebugHandler() {
	mgr, err := manager.New(&rest.Config{Host: "https://127.0.0.1:6443"}, manager.Options{
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
			m := meta.NewDefaultRESTMapper(nil)
			m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
			return m, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{}); err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/cache", mgr.CacheDebugHandler())
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/cache?kind=ConfigMap", nil))
	fmt.Print(rec.Body.String())
	// Output:
	// [
	//   {
	//     "group": "",
	//     "version": "v1",
	//     "kind": "ConfigMap",
	//     "shape": "typed",
	//     "namespace": "",
	//     "objects": 0,
	//     "bytes": 0
	//   }
	// ]
}
