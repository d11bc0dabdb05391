"""coding compaction package."""
