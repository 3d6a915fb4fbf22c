"""The run loop and what runs it: selection, the steps of an epoch and the model-call fan-out, curation,
consolidation, the nightly job, the Prefect flows and deployments, and the launch every run command goes through."""
