package v1

import (
	"context"
	"testing"

	webappv1 "example.com/guestbook/api/v1"
)

func TestDefaulterSetsReplicas(t *testing.T) {
	g := &webappv1.Guestbook{}
	if err := (&GuestbookCustomDefaulter{DefaultReplicas: 2}).Default(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if g.Spec.Replicas != 2 {
		t.Fatalf("replicas = %d, want 2", g.Spec.Replicas)
	}
}

func TestValidatorRejectsNegativeReplicas(t *testing.T) {
	v := &GuestbookCustomValidator{}
	bad := &webappv1.Guestbook{Spec: webappv1.GuestbookSpec{Replicas: -1}}
	if _, err := v.ValidateCreate(context.Background(), bad); err == nil {
		t.Fatal("ValidateCreate accepted replicas -1")
	}
	if _, err := v.ValidateUpdate(context.Background(), &webappv1.Guestbook{}, bad); err == nil {
		t.Fatal("ValidateUpdate accepted replicas -1")
	}
	warnings, err := v.ValidateDelete(context.Background(), &webappv1.Guestbook{})
	if err != nil || len(warnings) != 1 {
		t.Fatalf("ValidateDelete = %v, %v; want one warning", warnings, err)
	}
}
