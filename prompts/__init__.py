"""The prompt templates of the Reflector and the Curator (`*.txt`), shipped as package data so an installed
`playbook` finds them as a checkout does. Read by `core.prompts`; a template is a manifest line, a SYSTEM part and a
USER part."""
