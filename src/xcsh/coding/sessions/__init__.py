"""coding sessions package."""
