package envtest

// ApplyArguments exposes Arguments.apply to the external tests.
func ApplyArguments(a *Arguments, defaults []string) []string { return a.apply(defaults) }

// APIServerArgs exposes Environment.apiServerArgs to the external tests.
func APIServerArgs(e *Environment, port int) []string { return e.apiServerArgs(port) }
