"""ai providers package."""
