"""Reports, the layer above the workflow and the verifiers: export bundles of final labels in the public formats
(VerifyBench, VerifyBench-Hard, mu-MATH, MathArena), meta-evaluation of verifiers against the human labels, and
model evaluation (Pass@k, G-Pass@k).

May use: core, verifybench, annotation, grading. Used by: the pages (frontend) and config.
"""
