"""ACP mode: ``xcsh --mode acp`` speaks the Agent Client Protocol over stdio (docs/acp.md)."""
