"""rpc package."""
