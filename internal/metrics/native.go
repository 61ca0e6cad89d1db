package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Native histogram settings besides the bucket factor, controller-runtime's:
// at most 100 buckets per histogram, reset at most once an hour when it
// would need more.
const (
	nativeMaxBuckets    = 100
	nativeMinResetAfter = time.Hour
)

// nativeRegisterer is a Registerer whose histograms, built by the
// library through HistogramOpts, are also native histograms.
type nativeRegisterer struct {
	prometheus.Registerer
	factor float64
}

// WithNativeHistograms returns reg marked so that every histogram the
// library builds for it (HistogramOpts) is also a native histogram with
// bucket factor factor (controller-runtime uses 1.1): each bucket at most
// factor times as wide as the one before, at most 100 buckets, reset at
// most once an hour. The classic buckets stay, so a scraper that does not
// ask for native histograms sees what it saw before. A factor of 1 or
// less, or a nil reg, returns reg as it is.
func WithNativeHistograms(reg prometheus.Registerer, factor float64) prometheus.Registerer {
	if reg == nil || factor <= 1 {
		return reg
	}
	return nativeRegisterer{Registerer: reg, factor: factor}
}

// HistogramOpts returns opts with the native histogram settings of reg
// (WithNativeHistograms): unchanged, classic buckets only, for any other
// registerer.
func HistogramOpts(reg prometheus.Registerer, opts prometheus.HistogramOpts) prometheus.HistogramOpts {
	n, ok := reg.(nativeRegisterer)
	if !ok {
		return opts
	}
	opts.NativeHistogramBucketFactor = n.factor
	opts.NativeHistogramMaxBucketNumber = nativeMaxBuckets
	opts.NativeHistogramMinResetDuration = nativeMinResetAfter
	return opts
}
