"""Which model answers: the providers a run can use, resolved once from the settings, and the local model server."""
