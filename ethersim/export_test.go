package ethersim

// SetBackoff replaces a's backoff draw with f (nil restores the seeded
// draw), so a test can force collisions or spacing.
func SetBackoff(a *Attachment, f func(collisions int) int) { a.backoff = f }
