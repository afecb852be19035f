"""The embedding model and the persistent, content-addressed vector cache."""
