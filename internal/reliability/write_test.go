package reliability_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

func dataHash(d map[string]string) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s;", k, d[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// hasher derives an annotation from each parent's data and creates one
// child per parent with a deterministic name. It returns conflicts as
// they come: the controller must retry them.
type hasher struct {
	mgr       *manager.Manager
	conflicts atomic.Int64
}

func (h *hasher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if strings.HasSuffix(req.Name, "-child") || req.Name == "kube-root-ca.crt" {
		return reconcile.Result{}, nil
	}
	c := h.mgr.GetClient()
	var cm corev1.ConfigMap
	if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client404(err)
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name + "-child", Namespace: cm.Namespace,
		Labels: map[string]string{"parent": cm.Name}}}
	if err := controllerutil.SetControllerReference(&cm, child, h.mgr.GetScheme()); err != nil {
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	if err := c.Create(ctx, child); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, err
	}
	want := dataHash(cm.Data)
	if cm.Annotations["hash"] == want {
		return reconcile.Result{}, nil
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations["hash"] = want
	err := c.Update(ctx, &cm)
	if apierrors.IsConflict(err) {
		h.conflicts.Add(1)
	}
	return reconcile.Result{}, err
}

func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// TestConcurrentWritersConflicts runs eight writers against ten parents
// while the controller, reading from a lagging cache, writes a derived
// annotation on the same objects and creates one child per parent.
func TestConcurrentWritersConflicts(t *testing.T) {
	ns := newNamespace(t)
	const parents, writers = 10, 8
	names := make([]string, parents)
	for i := range names {
		names[i] = "parent-" + strconv.Itoa(i)
		_, err := admin.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: names[i]}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// The manager's watch events are held 10 ms each: its cache lags the
	// writers, so its updates meet conflicts.
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	defer p.Close()
	p.SetEventDelay(10 * time.Millisecond)
	logs := newCapture()
	mgr := newManager(t, p.Config(), ns, manager.Options{Logger: logs.logger()})
	h := &hasher{mgr: mgr}
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named(unique("hasher")).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).Complete(h))
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()

	// Each writer owns one data key and counts its own increments.
	var mu sync.Mutex
	expected := map[string]map[string]int{}
	var writerConflicts atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(4 * time.Second)
	for w := 0; w < writers; w++ {
		key := "w" + strconv.Itoa(w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for time.Now().Before(deadline) {
				name := names[rand.IntN(parents)]
				for {
					cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
					if !assert.NoError(t, err) {
						return
					}
					if cm.Data == nil {
						cm.Data = map[string]string{}
					}
					n, _ := strconv.Atoi(cm.Data[key])
					cm.Data[key] = strconv.Itoa(n + 1)
					_, err = admin.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
					if apierrors.IsConflict(err) {
						writerConflicts.Add(1)
						continue
					}
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					if expected[name] == nil {
						expected[name] = map[string]int{}
					}
					expected[name][key]++
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()

	// Converged: every parent's annotation matches its final data, and the
	// final data holds every writer's every increment.
	require.Eventually(t, func() bool {
		for _, name := range names {
			cm, err := admin.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil || cm.Annotations["hash"] != dataHash(cm.Data) {
				return false
			}
		}
		return true
	}, convergeWithin, 100*time.Millisecond, "every parent's derived annotation reconciled")
	for _, name := range names {
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(t, err)
		for key, n := range expected[name] {
			assert.Equal(t, strconv.Itoa(n), cm.Data[key], "no lost update: %s %s", name, key)
		}
		children, err := admin.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "parent=" + name})
		require.NoError(t, err)
		assert.Len(t, children.Items, 1, "exactly one child of %s", name)
	}

	var conflictErrors []string
	quietConflicts := 0
	for _, l := range logs.all() {
		mentions := strings.Contains(strings.ToLower(l.text), "conflict") || strings.Contains(l.text, "the object has been modified")
		if mentions && l.error {
			conflictErrors = append(conflictErrors, l.text)
		}
		if mentions && !l.error {
			quietConflicts++
		}
	}
	t.Logf("writer conflicts=%d controller conflicts=%d (logged below error level: %d, at error level: %d)",
		writerConflicts.Load(), h.conflicts.Load(), quietConflicts, len(conflictErrors))
	require.Positive(t, h.conflicts.Load(), "the controller met 409 conflicts")
	assert.Empty(t, conflictErrors, "conflicts are retried quietly, never logged as errors")
}
