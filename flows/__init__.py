"""The imperative shell: Prefect flows and tasks, and the `playbook` CLI."""
