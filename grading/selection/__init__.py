"""Selecting completions for human annotation from verifier verdicts: the VerifyBench and VerifyBench-Hard recipes
(`recipes`, pure), the candidates read from the database (`selectors`) and the project a selection becomes
(`services`)."""
