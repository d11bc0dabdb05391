"""coding tools package."""
