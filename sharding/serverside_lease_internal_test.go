package sharding

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
)

// The lease core's renewal, decided on its own last write, does not
// conflict with the annotation writes made since; a write by anyone else
// still makes it conflict.
func TestAnnotatingAPIKeepsRenewalsFromConflicting(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	c := fake.NewClientBuilder().WithScheme(s).Build()
	ctx := context.Background()
	a := newAnnotatingAPI(membership.ClientAPI{C: c}, "v1/127/00000000000000000000000000000000")

	created, err := a.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "l"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}})
	require.NoError(t, err)
	core := created.DeepCopy() // the lease core's copy

	gen := a.publish("v1/127/00000000000000000000000000000001")
	require.True(t, a.writeNow(ctx))
	assert.True(t, a.written(ctx, gen))
	var got coordinationv1.Lease
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: "l"}, &got))
	assert.Equal(t, "v1/127/00000000000000000000000000000001", got.Annotations[RangesAnnotation])
	assert.Equal(t, "me", *got.Spec.HolderIdentity, "the spec is left alone")
	require.True(t, a.writeNow(ctx), "nothing new to write is a success")

	renewed := core.DeepCopy()
	renewed.Spec.LeaseDurationSeconds = ptr.To(int32(15))
	out, err := a.Update(ctx, renewed)
	require.NoError(t, err, "the renewal is sent with the annotation write's resourceVersion")
	assert.Equal(t, "v1/127/00000000000000000000000000000001", out.Annotations[RangesAnnotation])

	// Someone else writes the Lease: the core's next renewal, on its copy,
	// conflicts as it should.
	other := out.DeepCopy()
	other.Spec.HolderIdentity = ptr.To("someone-else")
	require.NoError(t, c.Update(ctx, other))
	_, err = a.Update(ctx, out.DeepCopy())
	assert.True(t, apierrors.IsConflict(err), "got %v", err)
	// And an annotation write on the stale copy fails: the next renewal
	// (which reads the Lease first) carries it.
	a.publish("v1/127/00000000000000000000000000000002")
	assert.False(t, a.writeNow(ctx))
}
