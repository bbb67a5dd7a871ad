"""The shared core, the bottom layer: roles and permissions, the answer-type taxonomy, the background-job protocol,
the subject-kind and demo registries, a text-search condition (`search`), and the pure metrics (agreement, Pass@k,
judge meta-evaluation, bootstrap).

May use: Django and the libraries only; no other app of this project.
"""
