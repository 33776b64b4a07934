"""Apps to point the lab at (examples/README.md)."""
