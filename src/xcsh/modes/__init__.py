"""modes package."""
