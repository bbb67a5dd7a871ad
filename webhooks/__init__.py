"""Webhooks, the layer between the reports and the pages: the URLs researchers register on a project or a workspace
for events (an import or a run finished or failed, a project complete, an item adjudicated, an export ready), each
delivery signed with the hook's secret and sent by a Celery task with retries and backoff, the log of every attempt,
and the API and checks behind the webhooks pages. It hears the events of the apps below through core.events, and sends only
to endpoints the judges' egress allow-list (grading) accepts.

May use: core, verifybench, annotation, grading, reports. Used by: the pages (frontend) and config.
"""
