package envtest

// ApplyArguments exposes Arguments.apply to the external tests.
func ApplyArguments(a *Arguments, defaults []string) []string { return a.apply(defaults) }
