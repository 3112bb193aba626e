"""Event records."""
