"""The workflow's refusals: every service raises one of these (or a subclass) with a message for people."""

from __future__ import annotations


class WorkflowError(Exception):
    """A request the workflow refuses; the message is meant for the person who made it."""

    status_code = 409


class NotAllowed(WorkflowError):
    status_code = 403


class InvalidSubmission(WorkflowError):
    status_code = 400
