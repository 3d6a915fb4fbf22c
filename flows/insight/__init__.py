"""What the read commands show: the playbook's history and entries, sessions, the database, the evolution
report, impact, and `doctor`."""
