package v1

// Hub marks this type as a conversion hub.
func (*Widget) Hub() {}
