"""Training layout search: enumerate, constrain (each rejection with its reason), rank."""
