package faultproxy_test

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

func codecs() runtime.NegotiatedSerializer {
	return serializer.NewCodecFactory(clientgoscheme.Scheme).WithoutConversion()
}
