"""The pages, the top layer: server-rendered pages for every role, safe Markdown + KaTeX rendering of untrusted text
(`rendering`), server-drawn charts, the JavaScript and CSS bundle, the CSP middleware, and the pages of background
jobs (`jobs`).

May use: every app (core, verifybench, annotation, grading, reports). Used by: config (URLs).
"""
