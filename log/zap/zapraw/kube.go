package zapraw

import (
	"errors"
	"fmt"
	"reflect"

	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// KubeAwareEncoder is the encoder NewRaw's core writes through. Unless
// Verbose, a field of a line whose value is a Kubernetes object
// (runtime.Object with object metadata) is written as {apiVersion, kind,
// namespace, name} instead of the whole object: apiVersion and kind only
// when the object carries its type, namespace only when set. Fields added
// with zap's With (logr's WithValues) are encoded by the inner Encoder as
// they are, as in controller-runtime.
type KubeAwareEncoder struct {
	zapcore.Encoder

	// Verbose writes objects in full (development).
	Verbose bool
}

var _ zapcore.Encoder = (*KubeAwareEncoder)(nil)

// Clone copies the encoder and the fields it holds.
func (k *KubeAwareEncoder) Clone() zapcore.Encoder {
	return &KubeAwareEncoder{Encoder: k.Encoder.Clone(), Verbose: k.Verbose}
}

// EncodeEntry writes one line, objects among fields shortened unless
// Verbose.
func (k *KubeAwareEncoder) EncodeEntry(entry zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	if !k.Verbose {
		for i, f := range fields {
			if f.Type != zapcore.StringerType && f.Type != zapcore.ReflectType {
				continue
			}
			if obj, ok := f.Interface.(runtime.Object); ok {
				fields[i] = zapcore.Field{Key: f.Key, Type: zapcore.ObjectMarshalerType, Interface: objectRef{obj: obj}}
			}
		}
	}
	return k.Encoder.EncodeEntry(entry, fields)
}

// objectRef writes an object as its reference.
type objectRef struct{ obj runtime.Object }

var errNilObject = errors.New("zapraw: nil runtime.Object")

// MarshalLogObject writes apiVersion and kind (when set), namespace (when
// set) and name. A nil object or one without metadata is an error, which
// zap writes as the field's "<key>Error".
func (r objectRef) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	if v := reflect.ValueOf(r.obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return errNilObject
	}
	if gvk := r.obj.GetObjectKind().GroupVersionKind(); gvk.Version != "" {
		enc.AddString("apiVersion", gvk.GroupVersion().String())
		enc.AddString("kind", gvk.Kind)
	}
	m, err := meta.Accessor(r.obj)
	if err != nil {
		return fmt.Errorf("zapraw: %T has no object metadata: %w", r.obj, err)
	}
	if ns := m.GetNamespace(); ns != "" {
		enc.AddString("namespace", ns)
	}
	enc.AddString("name", m.GetName())
	return nil
}
