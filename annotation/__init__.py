"""The annotation workflow, above the benchmark data: projects and their members, items (one per subject, whatever
the subject kind), leases, labels, tie-breaks, adjudication, overrides, re-opening and exclusion, and the append-only
history; assignment under row locks; agreement figures; the item browser's filters and keyset pages, and bulk
actions on items; a project's workspace (settings and the rules for changing them, versioned guidelines, members
that can be removed without losing their labels, one-time invitations, the change log). Generic over subject kinds:
what an item is about comes from `core.subjects`, so the workflow imports no subject of its own.

May use: core, verifybench (datasets). Used by: grading, reports, frontend.
"""
