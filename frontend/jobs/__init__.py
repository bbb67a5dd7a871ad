"""Pages for background jobs of every kind: the forms that start them, one row shape for all of them, and the
generic job pages and actions (cancel, resume, restart)."""
