package serving

import "context"

type panicKey struct{}

// Recorder receives the panics that handlers recovered from. The webhook
// server makes one per path and puts it into every request's context.
type Recorder struct {
	// Panic is called with every recovered panic; nil: not counted.
	Panic func(recovered any)
	// ConversionPanic is called, besides Panic, with a panic of a
	// conversion function; nil: not counted.
	ConversionPanic func(recovered any)
}

// WithRecorder returns a context that carries r, which RecordPanic and
// RecordConversionPanic call.
func WithRecorder(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, panicKey{}, r)
}

// WithPanicRecorder returns a context whose Recorder's Panic is record.
func WithPanicRecorder(ctx context.Context, record func(recovered any)) context.Context {
	return WithRecorder(ctx, &Recorder{Panic: record})
}

// RecordPanic reports a panic that a handler recovered from to the
// Recorder in ctx, if any.
func RecordPanic(ctx context.Context, recovered any) {
	if r, ok := ctx.Value(panicKey{}).(*Recorder); ok && r.Panic != nil {
		r.Panic(recovered)
	}
}

// RecordConversionPanic reports a panic of a conversion function to the
// Recorder in ctx, if any: to its ConversionPanic, then to its Panic.
func RecordConversionPanic(ctx context.Context, recovered any) {
	if r, ok := ctx.Value(panicKey{}).(*Recorder); ok && r.ConversionPanic != nil {
		r.ConversionPanic(recovered)
	}
	RecordPanic(ctx, recovered)
}
