"""Benchmark data, the layer above the core: datasets, questions, reference answers, model completions and the labels
that came with imported files (PriorLabel); importing files line by line, all or nothing (the pure `importing`
package reads and validates, `bulk_writer` decides what to write and `row_inserters` inserts it); dataset
statistics; and the subject kinds of its rows (`subjects`: the correctness of a completion, the answer type of a
question).

May use: core. Used by: annotation, grading, reports, frontend.
"""
