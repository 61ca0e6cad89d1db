package controller

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "example.com/guestbook/api/v1"
)

var _ = Describe("Guestbook Controller", func() {
	Context("When reconciling a resource", func() {
		const resourceName = "test-resource"

		ctx := context.Background()

		typeNamespacedName := types.NamespacedName{
			Name:      resourceName,
			Namespace: "default",
		}
		var (
			recorder             *record.FakeRecorder
			controllerReconciler *GuestbookReconciler
		)

		BeforeEach(func() {
			recorder = record.NewFakeRecorder(10)
			controllerReconciler = &GuestbookReconciler{
				Client:   k8sClient,
				Scheme:   k8sClient.Scheme(),
				Recorder: recorder,
			}

			By("creating the custom resource for the Kind Guestbook")
			resource := &webappv1.Guestbook{
				ObjectMeta: metav1.ObjectMeta{Name: resourceName, Namespace: "default"},
				Spec:       webappv1.GuestbookSpec{Title: "Hello", Replicas: 1},
			}
			Expect(k8sClient.Create(ctx, resource)).To(Succeed())
		})

		AfterEach(func() {
			resource := &webappv1.Guestbook{}
			Expect(k8sClient.Get(ctx, typeNamespacedName, resource)).To(Succeed())

			By("Cleaning up the specific resource instance Guestbook")
			Expect(k8sClient.Delete(ctx, resource)).To(Succeed())

			By("Reconciling the deletion, which removes the finalizer")
			_, err := controllerReconciler.Reconcile(ctx, reconcile.Request{NamespacedName: typeNamespacedName})
			Expect(err).NotTo(HaveOccurred())
			err = k8sClient.Get(ctx, typeNamespacedName, resource)
			Expect(errors.IsNotFound(err)).To(BeTrue(), "the Guestbook is gone once its finalizer is removed: %v", err)
			Expect(recorder.Events).To(Receive(ContainSubstring("Deleting")))
		})

		It("should successfully reconcile the resource", func() {
			By("Reconciling the created resource")
			_, err := controllerReconciler.Reconcile(ctx, reconcile.Request{NamespacedName: typeNamespacedName})
			Expect(err).NotTo(HaveOccurred())

			guestbook := &webappv1.Guestbook{}
			Expect(k8sClient.Get(ctx, typeNamespacedName, guestbook)).To(Succeed())
			Expect(guestbook.Finalizers).To(ContainElement(guestbookFinalizer))
			Expect(guestbook.Status.ConfigMapName).To(Equal(resourceName + "-config"))
			Expect(meta.IsStatusConditionTrue(guestbook.Status.Conditions, "Available")).To(BeTrue())

			cm := &corev1.ConfigMap{}
			Expect(k8sClient.Get(ctx, types.NamespacedName{Name: resourceName + "-config", Namespace: "default"}, cm)).To(Succeed())
			Expect(cm.Data).To(HaveKeyWithValue("title", "Hello"))
			Expect(metav1.IsControlledBy(cm, guestbook)).To(BeTrue(), "the ConfigMap is owned by the Guestbook")
			Expect(recorder.Events).To(Receive(ContainSubstring("Configured")))
		})
	})
})
