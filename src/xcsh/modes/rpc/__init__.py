"""RPC mode: serve the JSON-lines protocol on stdio."""
