"""Background jobs: the abstract job row (`models.BackgroundJob`) and the one-execution-at-a-time protocol
(`protocol`: claim, heartbeat, cancel) that every job kind (verification runs, exports, imports) shares."""
