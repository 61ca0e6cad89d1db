package ownerref

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestOwnerNotStoredYet(t *testing.T) {
	owner := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	cm, err := ConfigFor(owner, scheme.Scheme)
	if err != nil {
		t.Fatalf("an owner without a UID is accepted: %v", err)
	}
	refs := cm.GetOwnerReferences()
	if len(refs) != 1 || refs[0].Kind != "Service" || refs[0].Name != "web" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Fatalf("owner references %+v", refs)
	}
}
