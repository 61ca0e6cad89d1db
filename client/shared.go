package client

import (
	"context"
	"fmt"
	"reflect"

	"github.com/kubeloop/kubeloop/client/internal/ryow"
)

// GetShared returns the object named by key, of T's kind, without copying
// it when r holds it in memory (r is a SharedReader, as the cache and the
// manager's client are). That object is shared with the cache and with
// every other caller: read it, never modify it; DeepCopy it first to make
// changes. It is the fastest read a hot path can make, cheaper than Get
// with UnsafeDisableDeepCopy, which still copies the object's top level
// into the caller's struct.
//
// Through the manager's client it keeps the read-your-own-writes guarantee
// of Get. From a reader that holds no objects (the API reader, a fake
// client) it is a Get into a new T. T must be a pointer to a typed API
// object the scheme knows, such as *corev1.ConfigMap; unstructured and
// metadata-only kinds need their apiVersion and kind, so read them with
// SharedReader.GetShared or Get.
//
//	cm, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
func GetShared[T Object](ctx context.Context, r Reader, key ObjectKey) (T, error) {
	var none T
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return none, fmt.Errorf("get %s: GetShared needs a pointer to a typed object, not %s", key, typ)
	}
	if r == nil {
		return none, fmt.Errorf("get %s: reader is nil", key)
	}
	if sr, ok := r.(SharedReader); ok {
		obj, err := sr.GetShared(ctx, key, none)
		if err != nil {
			return none, err
		}
		t, ok := obj.(T)
		if !ok {
			return none, fmt.Errorf("get %s: reader returned %T, not %s", key, obj, typ)
		}
		return t, nil
	}
	obj := reflect.New(typ.Elem()).Interface().(T)
	if err := r.Get(ctx, key, obj, UnsafeDisableDeepCopy); err != nil {
		return none, err
	}
	return obj, nil
}

// GetShared returns the cached object itself when the cache has a
// SharedReader (CacheOptions.Shared) and obj's kind is read from it,
// waiting for the cache to catch up with this client's own writes as Get
// does; otherwise it Gets a new object.
func (c *cachedClient) GetShared(ctx context.Context, key ObjectKey, obj Object) (Object, error) {
	if obj == nil {
		return nil, nilError("get", obj)
	}
	kindOf := c.kindOf(obj)
	useCache, gvk, sc := c.route.Route(kindOf)
	read := c.Get // a copy, through the cache unless it bypasses obj's kind
	if c.shared != nil && useCache {
		wk, tracked := c.route.ReadKey(c.writes, gvk, sc, key)
		if !tracked {
			return c.shared.GetShared(ctx, key, obj)
		}
		caughtUp, err := c.settle(ctx, wk, key, obj)
		if err != nil {
			return nil, err
		}
		if caughtUp {
			return c.shared.GetShared(ctx, key, obj)
		}
		read = c.live.Get
	}
	fresh := ryow.NewObjectLike(kindOf).(Object)
	if err := read(ctx, key, fresh, UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return fresh, nil
}
