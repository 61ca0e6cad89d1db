package lease

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// API is the part of the Lease API a Holder uses. Update must send the
// Lease's resourceVersion as its precondition (the API server answers a
// Conflict when it changed), as every Kubernetes client does. Errors are
// the API server's (apierrors.IsNotFound, IsConflict, IsAlreadyExists
// apply).
type API interface {
	Get(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error)
	Create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)
	Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)
}

// ClientsetAPI adapts client-go's typed coordination/v1 client to API.
func ClientsetAPI(c coordinationv1client.LeasesGetter) API { return clientsetAPI{c: c} }

type clientsetAPI struct {
	c coordinationv1client.LeasesGetter
}

var _ API = clientsetAPI{}

func (a clientsetAPI) Get(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	return a.c.Leases(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (a clientsetAPI) Create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return a.c.Leases(l.Namespace).Create(ctx, l, metav1.CreateOptions{})
}

func (a clientsetAPI) Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return a.c.Leases(l.Namespace).Update(ctx, l, metav1.UpdateOptions{})
}
