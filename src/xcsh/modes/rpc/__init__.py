"""modes rpc package."""
