package builder_test

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/reconcile"
)

// A controller of a kind whose CRD may not be installed yet (an optional
// integration, say): the manager starts anyway, the controller watches
// Certificates once their CRD is installed and established, stops quietly
// when it is deleted, and resumes when it returns. /readyz?verbose and
// kubeloop_source_waiting say while it waits. It needs a manager, so it
// has no output.
func ExampleWaitForCRD() {
	var mgr controller.Manager // from manager.New
	cert := &unstructured.Unstructured{}
	cert.SetGroupVersionKind(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"})
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		// ... read the Certificate through mgr.GetClient() and act ...
		return reconcile.Result{}, nil
	})
	err := builder.ControllerManagedBy(mgr).
		For(cert, builder.WaitForCRD).
		Named("certificates").
		Complete(r)
	if err != nil {
		panic(err)
	}
}
