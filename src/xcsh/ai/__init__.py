"""ai package."""
