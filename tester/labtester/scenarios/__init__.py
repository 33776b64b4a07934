"""Load shapes, one module each."""
