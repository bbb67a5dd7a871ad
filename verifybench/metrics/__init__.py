"""Pure metric computations (no Django imports): model stability, judge meta-evaluation, bootstrap intervals."""
