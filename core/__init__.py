"""The shared core, the bottom layer: roles and permissions, the answer-type taxonomy, the background-job protocol,
the subject-kind and demo registries, a text-search condition (`search`), the pure metrics (agreement, Pass@k,
judge meta-evaluation, bootstrap), and what guards every request: the API's bounded JSON parser, numeric-id router
and error schema, expiring tokens and the sign-in limits, and the 503 answer to a database outage.

May use: Django and the libraries only; no other app of this project.
"""
