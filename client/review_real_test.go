package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
)

// The review kinds take no name: a Create without one goes to the API
// server, which answers with the review's status, as controller-runtime's
// client lets it (cybozu-go/accurate checks its permissions so). Another
// kind without a name gets the server's 422, which also wraps
// ErrNameRequired.
func TestCreateWithoutNameIsTheServersToJudge(t *testing.T) {
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx := t.Context()
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "configmaps"},
	}}
	require.NoError(t, c.Create(ctx, review))
	assert.True(t, review.Status.Allowed, "the test's admin may list ConfigMaps: %+v", review.Status)

	err = c.Create(ctx, &authorizationv1.LocalSubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "nobody",
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "get", Resource: "secrets"}},
	})
	require.NoError(t, err, "a namespaced review without a name")

	cm := newConfigMap("default", "", nil)
	err = c.Create(ctx, cm)
	assert.ErrorIs(t, err, client.ErrNameRequired)
	assert.True(t, apierrors.IsInvalid(err), "the API server's own answer: %v", err)
}
