"""State, controllers and background jobs: thin callers of the core workbench."""
